#!/usr/bin/env bash
# The 18 committed 2-D p = 64 main-job points re-timed with 24 back-to-back calls (else as halo_scale.sh).
set -uo pipefail
bin=$(cat /tmp/p256/bin); M=/work/wt-overlap/bench/results/smpi
for pl in torus fattree dragonfly; do for n in 8 64 256; do for k in 1 3; do
  out=/tmp/p256/b24/halo_${pl}_p64_d2_n${n}_k${k}.txt; t0=$(date +%s)
  { echo "# CARTPLAN_COST_MODEL=$M/cost_model_${pl}_p256.json smpirun -np 64 -platform ${pl}_p64.xml -hostfile ${pl}_p64.hosts halo --dims 2 --n $n --halo $k --periodic 1 --iters 24 --timing blocks --check exchange"
    CARTPLAN_COST_MODEL=$M/cost_model_${pl}_p256.json nice -n 5 smpirun --log=xbt_cfg.thres:warning --log=smpi_config.thres:warning -np 64 \
      -platform /tmp/p256/${pl}_p64.xml -hostfile /tmp/p256/${pl}_p64.hosts $bin/tools/halo --dims 2 --n $n --halo $k --periodic 1 --iters 24 --timing blocks --check exchange
    echo "# wall $(($(date +%s) - t0)) s, load $(cut -d' ' -f1-3 /proc/loadavg)"; } > $out 2>&1
done; done; done
