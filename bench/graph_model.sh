#!/usr/bin/env bash
# Model predictions (NOT measurements) of graph schedules: linear against seed 003's pairing and
# cumulative pairing, under the built-in cost model, on Erdos-Renyi graphs (q = 0.05, seed
# 003's benchmark) and Moore graphs at p = 256..4096, via `cartplan graph explain --format json`.
# Writes bench/results/graph_model.md (the table docs/graphs-results.md quotes) and
# graph_model.jsonl.
#
#   bash bench/graph_model.sh                 # everything (ER at p = 4096 takes minutes)
#   QUICK=1 bash bench/graph_model.sh         # p <= 1024 only
set -euo pipefail
cd "$(dirname "$0")/.."
bazel build //tools:cartplan >/dev/null 2>&1
cartplan=bazel-bin/tools/cartplan
out=bench/results/graph_model
mkdir -p bench/results
: > "$out.jsonl"

# GRAPH CONSTRUCTION BLOCK-SIZES: the large random graphs use the sequential construction (the
# same patterns as every rank's messages, tests/graph/distributed_test.cc; the in-process run of
# their messages takes minutes to hours), so their set-up columns are empty.
runs=(
  "random:p=256,q=0.05,seed=1 distributed 4,1024" "random:p=512,q=0.05,seed=1 distributed 4,1024"
  "random:p=1024,q=0.05,seed=1 distributed 4,1024"
  "moore:dims=16x16,r=2 distributed 4,1024" "moore:dims=32x32,r=2 distributed 4,1024" "moore:dims=8x8x8,r=1 distributed 4,1024"
  "moore:dims=32x32,r=3,holes=0.1,seed=1 distributed 4,1024"
)
if [ "${QUICK:-0}" != 1 ]; then
  runs+=("moore:dims=64x64,r=2 distributed 4,1024" "moore:dims=16x16x16,r=1 distributed 4"
         "random:p=2048,q=0.05,seed=1 sequential 4" "random:p=4096,q=0.05,seed=1 sequential 4")
fi
for run in "${runs[@]}"; do
  read -r g construction sizes <<< "$run"
  for op in allgather alltoall; do
    for bytes in ${sizes//,/ }; do
      "$cartplan" graph explain --graph "$g" --op "$op" --block-bytes "$bytes" --construction "$construction" --format json |
        python3 -c 'import json,sys; j=json.load(sys.stdin); j["block_bytes"]=int(sys.argv[1]); print(json.dumps(j))' "$bytes" >> "$out.jsonl"
    done
  done
done

python3 bench/graph_model_table.py "$out.jsonl" > "$out.md"
echo "wrote $out.md"
