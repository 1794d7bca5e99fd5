#!/usr/bin/env bash
# Writes small_messages/judge{55,72}_{base,LO,pipe,floor}.txt: rank_judge.py on the 55 log-p runs and the 72 held-out runs.
cd "$(dirname "$0")/../../../.."
D=bench/results/smpi/small_messages
S55=$(ls bench/results/smpi/logp_collectives/sendorder/halo_*.txt)
H72=$(ls bench/results/smpi/halo_*_p*_n*_k*.txt | grep -v -E 'p1024|fattree_p256_d3_n256_k1|fattree_p256_n64_k1|torus_p256_n16_k3')
for set in 55 72; do
  files=$([ $set = 55 ] && echo $S55 || echo $H72)
  for v in base LO pipe floor; do
    case $v in base) env=;; LO) env="LO=1";; pipe) env="FORM=pipe";; floor) env="FORM=floor";; esac
    out=$D/judge${set}_$v.txt
    { echo "# $env python3 $D/rank_judge.py bazel-bin/tools/cartplan <the $set files of small_messages.md>"; env $env nice -n 5 python3 $D/rank_judge.py bazel-bin/tools/cartplan $files; } > $out 2>&1
  done
done
