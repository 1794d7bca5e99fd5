#!/usr/bin/env bash
# The main-job points re-timed with 24 back-to-back calls (the committed halo_*.txt runs time 4, which
# carries the barrier's exit skew and inflates two-phase plans: ../p256_gap.md), as the committed runs
# otherwise (the platform's committed p = 256 model, periodic, --check exchange). From the repository root:
#   bazel build --config=smpi //tools:halo
#   bash bench/results/smpi/nic_overlap/retime.sh PLATFORM NP D N K   # -> bench/results/smpi/nic_overlap/retimed/
#   MODEL=bench/results/smpi/nic_overlap/cost_model_PLATFORM_p256.json SUB=confirm bash .../retime.sh ...  # -> .../confirm/
set -uo pipefail
pl=$1 np=$2 d=$3 n=$4 k=$5 it=${ITERS:-24}
r=bench/results/smpi
model=${MODEL:-$r/cost_model_${pl}_p256.json} sub=${SUB:-retimed}
bin="$(bazel info --config=smpi bazel-bin 2>/dev/null)"
python3 bench/smpi/platforms.py "$pl" --np "$np" --out-dir out/smpi/platforms >/dev/null
mkdir -p $r/nic_overlap/$sub
out=$r/nic_overlap/$sub/halo_${pl}_p${np}_d${d}_n${n}_k${k}.txt; t0=$(date +%s)
{ echo "# CARTPLAN_COST_MODEL=$model smpirun -np $np -platform ${pl}_p${np}.xml -hostfile ${pl}_p${np}.hosts halo --dims $d --n $n --halo $k --periodic 1 --iters $it --timing blocks --check exchange"
  CARTPLAN_COST_MODEL=$model nice -n 5 smpirun --log=xbt_cfg.thres:warning --log=smpi_config.thres:warning -np "$np" \
    -platform out/smpi/platforms/${pl}_p${np}.xml -hostfile out/smpi/platforms/${pl}_p${np}.hosts "$bin/tools/halo" \
    --dims "$d" --n "$n" --halo "$k" --periodic 1 --iters "$it" --timing blocks --check exchange; rc=$?
  echo "# wall $(($(date +%s) - t0)) s, exit $rc, load $(cut -d' ' -f1-3 /proc/loadavg)"; } >"$out" 2>&1
