#!/usr/bin/env bash
# Model predictions (NOT measurements) of the grid algorithm (virtual-grid routing, 2-D and 3-D
# grids) against linear, seed 003's pairing and cumulative pairing, under the built-in cost
# model, on the graphs of bench/graph_model.sh (Erdos-Renyi q = 0.05, Moore full and with
# holes, p = 256..4096), via `cartplan graph explain --format json`. Linear and grid are
# computed here (`--algo linear`, `--algo grid`, distributed construction); pairing and
# cumulative are taken from bench/results/graph_model.jsonl (bench/graph_model.sh; their
# planners are unchanged, and the table checks that linear agrees to 0.01 us).
# Writes bench/results/graph_grid_model.md and graph_grid_model.jsonl.
#
#   bash bench/graph_grid_model.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bazel build //tools:cartplan >/dev/null 2>&1
cartplan=bazel-bin/tools/cartplan
out=bench/results/graph_grid_model
mkdir -p bench/results
: > "$out.jsonl"

graphs=(
  random:p=256,q=0.05,seed=1 random:p=512,q=0.05,seed=1 random:p=1024,q=0.05,seed=1 random:p=2048,q=0.05,seed=1
  random:p=4096,q=0.05,seed=1 moore:dims=16x16,r=2 moore:dims=8x8x8,r=1 moore:dims=32x32,r=3,holes=0.1,seed=1
  moore:dims=32x32,r=2 moore:dims=64x64,r=2 moore:dims=16x16x16,r=1
)
for g in "${graphs[@]}"; do
  for op in allgather alltoall; do
    for bytes in 4 1024; do
      for algo in linear grid; do
        "$cartplan" graph explain --graph "$g" --op "$op" --block-bytes "$bytes" --algo "$algo" --format json |
          python3 -c 'import json,sys; j=json.load(sys.stdin); j["block_bytes"]=int(sys.argv[1]); print(json.dumps(j))' "$bytes" >> "$out.jsonl"
      done
    done
  done
done

python3 bench/graph_grid_model_table.py "$out.jsonl" bench/results/graph_model.jsonl > "$out.md"
echo "wrote $out.md"
