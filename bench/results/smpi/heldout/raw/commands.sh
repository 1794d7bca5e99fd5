#!/bin/bash
# The commands behind each file in raw/. Two kinds:
#
# 1. Re-run and recorded with their exact command as the first line ("# command: ..."), by
#    rerun_clients.sh: client_*.txt, graph_*.txt, client_missing_model_*.txt.
#
# 2. Everything else (calib_*.txt, model_*.json, halo_*.txt, cbench_two_sites.txt) was run by hand
#    from /tmp/heldout on 2026-11-27 between 13:01 and 13:39 UTC, and the command lines were NOT
#    kept. The lines below are RECONSTRUCTED from the README's recipe and what each output prints
#    about itself (np, process grid, n, halo k, periodic, iterations, the model file calibrate
#    wrote); the smpirun arguments, the model used and the option spelling are not recorded
#    byte for byte. Where a file does not say which model a run used, this says so.
#    The last line "wall N s" of the calib and cbench files was added around the command by the
#    shell (elapsed seconds, the 2-core machine at load 4-8), not printed by the program.
#    model_X.json here are copies of the /tmp/heldout/model_X.json that calib_X.txt says it wrote.
#
# Which cartplan: calib_eth10g.txt / model_eth10g.json (the "old sizes 0-8 ints" of the README,
# fix 2) and the halo runs priced with that model (halo_eth10g_dims3n16.txt,
# halo_eth10g_dims2n256halo3.txt, halo_eth10g_old_dims3n48.txt) used the install of main
# a7bf98b (before 1a36de5 moved the sizes). calib_two_sites.txt / model_two_sites.json and
# halo_two_sites_d3_n16.txt predate 1a36de5 as well (file times 13:01-13:03 UTC, commit 13:06);
# with that platform's 4096-byte eager limit the old and new sizes are the same. The other files
# come from installs of this branch after 1a36de5 (`bash install.sh --smpi /tmp/heldout_prefix`).
#
# Not meant to be run as a whole (about 25 min of simulation at load 4-8); from the repository root:
P=bench/results/smpi/heldout; M=/tmp/heldout; CAL=/tmp/heldout_prefix/bin/cartplan-calibrate
L="--log=xbt_cfg.thres:warning --log=smpi_config.thres:warning"
H="$(bazel info --config=smpi bazel-bin)/tools/halo"          # bazel build --config=smpi //tools:halo
TS="-platform $P/two_sites.xml -hostfile $P/two_sites_p32.hosts"
TSS="-platform $P/two_sites.xml -hostfile $P/two_sites_short.hosts"
ETH="-platform $P/eth10g_flat.xml"
BRR="-platform $P/bignode_fast.xml -hostfile $P/bignode_rr_p64.hosts"
BNO="-platform $P/bignode_fast.xml"
BBL="-platform $P/bignode_fast.xml -hostfile $P/bignode_block_p64.hosts"
run() { nice -n 5 smpirun $L "$@"; }

# calibrations (calibrate's defaults under SMPI: 5 block sizes, 1 repetition, sync timing)
run -np 32 $TS  $CAL --out $M/model_two_sites.json        >$M/calib_two_sites.txt 2>&1
run -np 32 $TSS $CAL --out $M/model_two_sites_short.json  >$M/calib_two_sites_short.txt 2>&1
run -np 32 $ETH $CAL --out $M/model_eth10g.json           >$M/calib_eth10g.txt 2>&1        # main a7bf98b
run -np 32 $ETH $CAL --out $M/model_eth10g_fixed.json     >$M/calib_eth10g_fixed.txt 2>&1
run -np 64 $ETH $CAL --out $M/model_eth10g_p64.json       >$M/calib_eth10g_p64.txt 2>&1
run -np 64 $BRR $CAL --out $M/model_bignode_rr.json       >$M/calib_bignode_rr.txt 2>&1
run -np 32 $BNO $CAL --out $M/model_bignode_nohf.json     >$M/calib_bignode_nohf.txt 2>&1
run -np 64 $BBL $CAL --out $M/model_bignode_block.json    >$M/calib_bignode_block.txt 2>&1

# the main job (tools/halo), each with the model of its platform and placement
D3="--dims 3 --periodic 1 --iters 10"; D2="--dims 2 --periodic 1 --iters 10"
CARTPLAN_COST_MODEL=$M/model_two_sites.json run -np 32 $TS $H --dims 3 --n 16 --periodic 1 --iters 50 >$M/halo_two_sites_d3_n16.txt 2>&1
CARTPLAN_COST_MODEL=$M/model_two_sites.json run -np 32 $TS $H $D2 --n 256 --halo 3 >$M/halo_two_sites_dims2n256halo3.txt 2>&1
CARTPLAN_COST_MODEL=$M/model_two_sites.json run -np 32 $TS $H $D3 --n 48 >$M/halo_two_sites_dims3n48.txt 2>&1
CARTPLAN_COST_MODEL=$M/model_two_sites_short.json run -np 32 $TSS $H $D3 --n 16 >$M/halo_two_sites_short_dims3n16.txt 2>&1
CARTPLAN_COST_MODEL=$M/model_two_sites_short.json run -np 32 $TSS $H $D2 --n 256 --halo 3 >$M/halo_two_sites_short_dims2n256halo3.txt 2>&1
CARTPLAN_COST_MODEL=$M/model_eth10g.json run -np 32 $ETH $H $D3 --n 16 >$M/halo_eth10g_dims3n16.txt 2>&1
CARTPLAN_COST_MODEL=$M/model_eth10g.json run -np 32 $ETH $H $D2 --n 256 --halo 3 >$M/halo_eth10g_dims2n256halo3.txt 2>&1
CARTPLAN_COST_MODEL=$M/model_eth10g.json run -np 32 $ETH $H $D3 --n 48 >$M/halo_eth10g_old_dims3n48.txt 2>&1
CARTPLAN_COST_MODEL=$M/model_eth10g_fixed.json run -np 32 $ETH $H $D2 --n 256 --halo 3 >$M/halo_eth10g_fixed_dims2n256halo3.txt 2>&1
CARTPLAN_COST_MODEL=$M/model_eth10g_fixed.json run -np 32 $ETH $H $D3 --n 48 >$M/halo_eth10g_fixed_dims3n48.txt 2>&1
CARTPLAN_COST_MODEL=$M/model_eth10g_p64.json run -np 64 $ETH $H $D3 --n 16 >$M/halo_eth10g_p64_dims3n16.txt 2>&1
CARTPLAN_COST_MODEL=$M/model_eth10g_p64.json run -np 64 $ETH $H $D2 --n 256 --halo 3 >$M/halo_eth10g_p64_dims2n256halo3.txt 2>&1
# the mesh runs: the files do not name the model; these exact lines (with raw/model_eth10g_p64.json,
# the same file) re-run at 14:05 UTC on this branch reproduce every variant row of both files, times
# and predictions (model_eth10g_fixed.json predicts 113.41 us for np 37's direct, not 119.05)
CARTPLAN_COST_MODEL=$M/model_eth10g_p64.json run -np 37 $ETH $H --dims 3 --n 8 --periodic 0 --iters 5 >$M/halo_eth10g_np37_nonperiodic.txt 2>&1
CARTPLAN_COST_MODEL=$M/model_eth10g_p64.json run -np 48 $ETH $H --dims 3 --n 8 --periodic 0 --iters 5 >$M/halo_eth10g_np48_nonperiodic.txt 2>&1
CARTPLAN_COST_MODEL=$M/model_bignode_rr.json run -np 64 $BRR $H $D3 --n 16 >$M/halo_bignode_rr_dims3n16.txt 2>&1
CARTPLAN_COST_MODEL=$M/model_bignode_rr.json run -np 64 $BRR $H $D2 --n 64 >$M/halo_bignode_rr_dims2n64.txt 2>&1
CARTPLAN_COST_MODEL=$M/model_bignode_rr.json run -np 64 $BRR $H $D2 --n 512 --halo 3 >$M/halo_bignode_rr_dims2n512halo3.txt 2>&1
CARTPLAN_COST_MODEL=$M/model_bignode_rr.json run -np 64 $BRR $H $D3 --n 48 >$M/halo_bignode_rr_dims3n48.txt 2>&1
CARTPLAN_COST_MODEL=$M/model_bignode_nohf.json run -np 32 $BNO $H $D3 --n 16 >$M/halo_bignode_nohf_dims3n16.txt 2>&1
CARTPLAN_COST_MODEL=$M/model_bignode_nohf.json run -np 32 $BNO $H $D2 --n 512 --halo 3 >$M/halo_bignode_nohf_dims2n512halo3.txt 2>&1
CARTPLAN_COST_MODEL=$M/model_bignode_nohf.json run -np 32 $BNO $H $D3 --n 48 >$M/halo_bignode_nohf_dims3n48.txt 2>&1
CARTPLAN_COST_MODEL=$M/model_bignode_block.json run -np 64 $BBL $H $D3 --n 16 >$M/halo_bignode_block_dims3n16.txt 2>&1
CARTPLAN_COST_MODEL=$M/model_bignode_block.json run -np 64 $BBL $H $D2 --n 512 --halo 3 >$M/halo_bignode_block_dims2n512halo3.txt 2>&1
CARTPLAN_COST_MODEL=$M/model_bignode_block.json run -np 64 $BBL $H $D3 --n 48 >$M/halo_bignode_block_dims3n48.txt 2>&1

# collective_bench on two_sites (the file says: 20 timed calls after 3 warm-up, grid 4x4x2,
# periodic 1); whether the model was given by CARTPLAN_COST_MODEL or --cost-model is not recorded
B="$(bazel info --config=smpi bazel-bin)/bench/collective_bench"
CARTPLAN_COST_MODEL=$M/model_two_sites.json run -np 32 $TS $B --stencil box:d=3,n=3,f=-1 --op alltoall --m 1,100 >$M/cbench_two_sites.txt 2>&1
