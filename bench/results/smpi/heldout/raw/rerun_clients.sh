#!/bin/bash
# Re-runs the held-out clients (client.cc, graph_client.c) and the missing-cost-model error at small
# p, recording each run in raw/<name>.txt: its exact command first ("# command: ..."), then its
# output, then "# exit status: N". Run from the repository root after
# `bash install.sh --smpi /tmp/heldout_prefix`. Simulated runs; wall time depends on the load only.
set -u
P=bench/results/smpi/heldout
R=$P/raw
PC="$(PKG_CONFIG_PATH=/tmp/heldout_prefix/lib/pkgconfig pkg-config --cflags --libs cartplan-smpi)"
smpicxx -std=c++20 -O2 -Wall $P/client.cc $PC -o /tmp/heldout_client || exit 1
smpicc -O2 -Wall $P/graph_client.c $PC -o /tmp/heldout_graph_client || exit 1
L="--log=xbt_cfg.thres:warning --log=smpi_config.thres:warning"

# record NAME MODEL SMPIRUN-ARGS...: runs CARTPLAN_COST_MODEL=MODEL nice -n 5 smpirun $L ARGS.
record() {
  local name=$1 model=$2; shift 2
  local cmd="CARTPLAN_COST_MODEL=$model nice -n 5 smpirun $L $*"
  { echo "# command: $cmd"
    env CARTPLAN_COST_MODEL="$model" nice -n 5 timeout --signal=KILL 600 smpirun $L "$@" 2>&1
    echo "# exit status: $?"; } > "$R/$name.txt"
  echo "$name: $(grep -c ' OK' "$R/$name.txt") OK lines, $(tail -n 1 "$R/$name.txt")"
}

C="/tmp/heldout_client --n 8 --k 1 --m 4"
record client_two_sites_block_p32 $R/model_two_sites.json -np 32 -platform $P/two_sites.xml -hostfile $P/two_sites_p32.hosts $C
record client_two_sites_short_p32 $R/model_two_sites_short.json -np 32 -platform $P/two_sites.xml -hostfile $P/two_sites_short.hosts $C
record client_eth10g_p32 $R/model_eth10g_fixed.json -np 32 -platform $P/eth10g_flat.xml $C
record client_eth10g_p64 $R/model_eth10g_p64.json -np 64 -platform $P/eth10g_flat.xml $C
record client_bignode_rr_p64 $R/model_bignode_rr.json -np 64 -platform $P/bignode_fast.xml -hostfile $P/bignode_rr_p64.hosts $C
record client_bignode_nohf_p32 $R/model_bignode_nohf.json -np 32 -platform $P/bignode_fast.xml $C
record client_bignode_block_p64 $R/model_bignode_block.json -np 64 -platform $P/bignode_fast.xml -hostfile $P/bignode_block_p64.hosts $C

G=/tmp/heldout_graph_client
record graph_two_sites_block_p8 $R/model_two_sites.json -np 8 -platform $P/two_sites.xml -hostfile $P/two_sites_p32.hosts $G
record graph_two_sites_block_p32 $R/model_two_sites.json -np 32 -platform $P/two_sites.xml -hostfile $P/two_sites_p32.hosts $G
record graph_eth10g_p64 $R/model_eth10g_p64.json -np 64 -platform $P/eth10g_flat.xml $G

# The error message for a cost model that does not exist (fix 1 of the README).
record client_missing_model_eth10g_p8 /nonexistent.json -np 8 -platform $P/eth10g_flat.xml $C
