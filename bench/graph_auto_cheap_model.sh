#!/usr/bin/env bash
# Model predictions (NOT measurements): what graph auto loses if it prices only the candidates
# that are cheap to construct (linear, the 2-D and 3-D grids: d rounds) and never seed 003's
# pairing and cumulative pairing (tens to hundreds of rounds). For each graph, op, block size and
# cost model, `cartplan graph explain --format json` prices every candidate; the table
# (bench/graph_auto_cheap_model.py) lists what auto picks from all of them and from the cheap ones,
# and what the default (Info cartplan_auto_candidates=auto) picks in a persistent init: the cheap
# ones where p has a usable grid, every candidate where it has none (prime or badly factored p:
# engine/graph/auto_candidates.h's grid_usable).
# Models: the built-in one and the fat-tree and torus SMPI p = 256 calibrations of
# bench/results/smpi/. Block sizes 4 and 1024 B, allgather and alltoall.
# Writes bench/results/graph_auto_cheap_model.md and .jsonl.
#
#   bash bench/graph_auto_cheap_model.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bazel build //tools:cartplan >/dev/null 2>&1
cartplan="$(bazel info bazel-bin 2>/dev/null)/tools/cartplan"
out=bench/results/graph_auto_cheap_model

graphs=(
  random:p=64,q=0.2,seed=1 random:p=128,q=0.1,seed=1 random:p=251,q=0.05,seed=1 random:p=256,q=0.05,seed=1
  random:p=256,q=0.2,seed=2 random:p=512,q=0.05,seed=1 random:p=1024,q=0.05,seed=1
  moore:dims=8x8,r=1 moore:dims=16x16,r=1 moore:dims=16x16,r=2 moore:dims=17x15,r=2 moore:dims=16x16,r=2,holes=0.1,seed=1
  moore:dims=16x16,r=3,periodic=1 moore:dims=8x8x8,r=1 moore:dims=32x32,r=3,holes=0.1,seed=1 moore:dims=32x32,r=2
  osu:p=64,d=2,r=1 osu:p=256,d=3,r=1 mesh:cells=256x256,parts=64 mesh:cells=512x512,parts=256,stencil=9
  mesh:cells=64x64x64,parts=256,stencil=27
  random:p=509,q=0.05,seed=1 random:p=909,q=0.05,seed=1 random:p=1021,q=0.05,seed=1 random:p=2039,q=0.05,seed=1
)
models=(builtin fattree torus)
raw=$(mktemp -d)
n=0
for g in "${graphs[@]}"; do
  for m in "${models[@]}"; do
    cm=()
    [ "$m" != builtin ] && cm=(--cost-model "bench/results/smpi/cost_model_${m}_p256.json")
    for op in allgather alltoall; do
      for bytes in 4 1024; do
        n=$((n + 1))
        echo "$n $g $m $bytes" >> "$raw/manifest"
        printf '%s\0' "$cartplan graph explain --graph $g --op $op --block-bytes $bytes --construction sequential ${cm[*]} --format json > $raw/$n.json" >> "$raw/commands"
      done
    done
  done
done
xargs -0 -P 2 -n 1 bash -c < "$raw/commands"  # two at a time (p = 2039 takes ~30 s a point)
python3 -c '
import json, sys
for line in open(sys.argv[1] + "/manifest"):
    n, g, m, b = line.split()
    j = json.load(open(sys.argv[1] + "/" + n + ".json"))
    print(json.dumps({"graph": g, "model": m, "op": j["op"], "block_bytes": int(b), "ranks": j["ranks"], "candidates": j["candidates"]}))
' "$raw" > "$out.jsonl"
rm -r "$raw"
python3 bench/graph_auto_cheap_model.py "$out.jsonl" > "$out.md"
echo "wrote $out.md"
