#!/bin/bash
# Re-runs the held-out bignode_fast.xml rows with cyclic placement learned (branch wip-place):
# calibrate, then tools/halo for the README's configurations, each output's first line its command.
# From the repository root, after `bazel build --config=smpi //tools:halo //bench:calibrate`; the
# binaries were copied to /tmp/place_bin first (BIN below) so that no later build swaps them mid-run.
set -u
P=bench/results/smpi/heldout; O=$P/placement/raw; BIN=${BIN:-/tmp/place_bin}
L="--log=xbt_cfg.thres:warning --log=smpi_config.thres:warning"
BRR="-platform $P/bignode_fast.xml -hostfile $P/bignode_rr_p64.hosts"
BNO="-platform $P/bignode_fast.xml"
BBL="-platform $P/bignode_fast.xml -hostfile $P/bignode_block_p64.hosts"
D3="--dims 3 --periodic 1 --iters 10"; D2="--dims 2 --periodic 1 --iters 10"
# run OUT [ENV=..] ARGS..: the command as the first line, then its output, then the wall time.
run() {
  local out=$1; shift
  local envs=()
  while [[ $1 == *=* ]]; do envs+=("$1"); shift; done
  echo "# command: ${envs[*]} nice -n 5 smpirun $L $*" >"$O/$out"
  local t0=$(date +%s.%N)
  env "${envs[@]}" nice -n 5 smpirun $L "$@" >>"$O/$out" 2>&1
  echo "wall $(python3 -c "import time; print(round(time.time() - $t0, 1))") s (load: $(cut -d' ' -f1-3 /proc/loadavg))" >>"$O/$out"
}
what=${1:-all}
if [[ $what == all || $what == cyclic ]]; then
  run calib_bignode_rr.txt   -np 64 $BRR $BIN/calibrate --out $O/model_bignode_rr.json
  run calib_bignode_nohf.txt -np 32 $BNO $BIN/calibrate --out $O/model_bignode_nohf.json
  M=CARTPLAN_COST_MODEL=$O/model_bignode_rr.json
  run halo_bignode_rr_dims3n16.txt       $M -np 64 $BRR $BIN/halo $D3 --n 16
  run halo_bignode_rr_dims2n64.txt       $M -np 64 $BRR $BIN/halo $D2 --n 64
  run halo_bignode_rr_dims2n512halo3.txt $M -np 64 $BRR $BIN/halo $D2 --n 512 --halo 3
  run halo_bignode_rr_dims3n48.txt       $M -np 64 $BRR $BIN/halo $D3 --n 48
  M=CARTPLAN_COST_MODEL=$O/model_bignode_nohf.json
  run halo_bignode_nohf_dims3n16.txt       $M -np 32 $BNO $BIN/halo $D3 --n 16
  run halo_bignode_nohf_dims2n512halo3.txt $M -np 32 $BNO $BIN/halo $D2 --n 512 --halo 3
  run halo_bignode_nohf_dims3n48.txt       $M -np 32 $BNO $BIN/halo $D3 --n 48
fi
if [[ $what == all || $what == block ]]; then
  run calib_bignode_block.txt -np 64 $BBL $BIN/calibrate --out $O/model_bignode_block.json
  M=CARTPLAN_COST_MODEL=$O/model_bignode_block.json
  run halo_bignode_block_dims3n16.txt       $M -np 64 $BBL $BIN/halo $D3 --n 16
  run halo_bignode_block_dims2n512halo3.txt $M -np 64 $BBL $BIN/halo $D2 --n 512 --halo 3
  run halo_bignode_block_dims3n48.txt       $M -np 64 $BBL $BIN/halo $D3 --n 48
fi
