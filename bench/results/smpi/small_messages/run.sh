#!/usr/bin/env bash
# One SMPI run of tools/halo at torus p = 256 (16 ranks per node) for bench/results/smpi/small_messages.md.
# run.sh NAME XML [halo args...] -> /tmp/sm/NAME.txt (copied here afterwards). Platforms:
#   python3 bench/smpi/platforms.py torus --np 256 --out-dir /tmp/sm          (torus_p256.xml, .hosts)
#   torus_p256_os0.xml: the same with smpi/os, smpi/ois, smpi/or = 0:0:0 (sed, see small_messages.md)
# Binary: the SMPI build of main's tools/halo that made logp_collectives/sendorder/ (/work/smpi_bin/sendorder).
name=$1 xml=$2; shift 2
cd "$(dirname "$0")/../../../.."
source bench/smpi/logp_collectives.sh
t0=$(date +%s)
{ echo "# CARTPLAN_COST_MODEL=bench/results/smpi/nic_overlap/cost_model_torus_p256.json smpirun ${logp_collectives[*]} -np 256 -platform $xml -hostfile /tmp/sm/torus_p256.hosts /work/smpi_bin/sendorder/tools/halo $*"
CARTPLAN_COST_MODEL=bench/results/smpi/nic_overlap/cost_model_torus_p256.json nice -n 5 timeout 900 smpirun --log=xbt_cfg.thres:warning --log=smpi_config.thres:warning --log=smpi_coll.thres:warning "${logp_collectives[@]}" -np 256 -platform "$xml" -hostfile /tmp/sm/torus_p256.hosts /work/smpi_bin/sendorder/tools/halo "$@"
rc=$?
echo "# wall $(($(date +%s)-t0)) s, exit $rc"; } > /tmp/sm/$name.txt 2>&1
