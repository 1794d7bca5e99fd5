#!/usr/bin/env bash
# The runs of p256_gap.md: tools/halo (SMPI build) on a platform XML (bench/smpi/platforms.py, or a copy with link bandwidths x 1000), writing /tmp/p256/out_TAG.txt.
# run.sh TAG PLATFORM_XML HOSTS NP N K ARGS... : one halo run, 2-D, periodic, committed torus model
set -uo pipefail
tag=$1 xml=$2 hosts=$3 np=$4 n=$5 k=$6; shift 6
model=${MODEL:-/work/wt-overlap/bench/results/smpi/cost_model_torus_p256.json}
bin=$(cat /tmp/p256/bin)
out=/tmp/p256/out_$tag.txt
t0=$(date +%s)
{ echo "# CARTPLAN_COST_MODEL=$model smpirun -np $np -platform $xml -hostfile $hosts halo --dims 2 --n $n --halo $k --periodic 1 --check exchange $*"
  CARTPLAN_COST_MODEL=$model nice -n 5 smpirun --log=xbt_cfg.thres:warning --log=smpi_config.thres:warning -np $np -platform $xml -hostfile $hosts \
    $bin/tools/halo --dims 2 --n $n --halo $k --periodic 1 --check exchange "$@"
  echo "# wall $(($(date +%s) - t0)) s, exit $?, load $(cut -d' ' -f1-3 /proc/loadavg)"; } > $out 2>&1
echo "$tag done $(($(date +%s) - t0)) s"
