#!/usr/bin/env bash
# One SMPI run of tools/halo at p = 256 for bench/results/smpi/direct_gap.md (investigation record, run from /tmp/dg).
# Platforms: python3 bench/smpi/platforms.py torus --np 256 --out-dir /tmp/dg, variants by sed (see direct_gap.md);
# HOSTS: another hostfile (ranks per node).
# run.sh NAME XML [halo args...]: one SMPI run of tools/halo at torus p=256 (16 ranks/node), output /tmp/dg/NAME.txt
name=$1 xml=$2; shift 2
cd /work/wt-a2av
source bench/smpi/logp_collectives.sh
t0=$(date +%s)
{ echo "# CARTPLAN_COST_MODEL=bench/results/smpi/nic_overlap/cost_model_torus_p256.json smpirun ${logp_collectives[*]} -np 256 -platform $xml -hostfile ${HOSTS:-/tmp/dg/torus_p256.hosts} /work/smpi_bin/sendorder/tools/halo $*"
CARTPLAN_COST_MODEL=bench/results/smpi/nic_overlap/cost_model_torus_p256.json nice -n 5 timeout 400 smpirun --log=xbt_cfg.thres:warning --log=smpi_config.thres:warning --log=smpi_coll.thres:warning "${logp_collectives[@]}" -np 256 -platform "$xml" -hostfile ${HOSTS:-/tmp/dg/torus_p256.hosts} /work/smpi_bin/sendorder/tools/halo "$@"
echo "# wall $(($(date +%s)-t0)) s, exit $?"; } > /tmp/dg/$name.txt 2>&1
