#!/bin/bash
# usage: sweep.sh PLATFORM.xml HOSTS NP MODEL OUT
plat=$1 hosts=$2 np=$3 model=$4 out=$5
S="smpirun --log=xbt_cfg.thres:warning --log=smpi_config.thres:warning --log=smpi_mpi.thres:error --log=smpi_pmpi.thres:error"
run() { CARTPLAN_COST_MODEL=$model timeout 600 $S -np $np -platform $plat -hostfile $hosts /tmp/client/src/client "$@" 2>&1 | grep -E "^(CHECK|RESULT)|rror|FAIL|cartplan:" ; echo "  [rc=${PIPESTATUS[0]} args=$*]"; }
for cfg in "2 16 1" "2 128 2" "3 8 1" "3 24 1"; do
  for a in auto direct combining dimwise split hybrid; do run halo $cfg $a; done
done
for cfg in "3 1" "3 100" "3 1000" "2 10"; do
  for a in auto direct combining loground hybrid; do run a2a $cfg $a; done
done
