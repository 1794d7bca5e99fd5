#!/usr/bin/env bash
# Model predictions (NOT measurements) of graph schedules: linear against seed 003's pairing and
# cumulative pairing, under the built-in cost model, on Erdos-Renyi graphs (q = 0.05, seed
# 003's benchmark) and Moore graphs at p = 256..4096, via `cartplan graph explain --format json`.
# Writes bench/results/graph_model.md (the table docs/graphs.md quotes) and graph_model.jsonl.
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

python3 - "$out.jsonl" > "$out.md" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("Model predictions of `cartplan graph explain` (built-in cost model: alpha 1 us, phase 0.5 us,")
print("beta 0.0005 us/B, copy 0.0002 us/B, rendezvous 2 us above 4064 B), max over ranks of the")
print("per-rank time; ratio = candidate / linear; picked = what auto runs (10 % margin).")
print("These are model predictions, not measurements. Command: `bash bench/graph_model.sh`.")
print()
print("| graph | p | op | block B | linear us | pairing us (ratio) | cumulative us (ratio) | critical path ratio pairing / cumulative | picked | set-up rounds pairing / cumulative | set-up KiB sent by one rank (max) |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for j in rows:
    c = {x["algorithm"]: x for x in j["candidates"]}
    lin = c["linear"]["max_rank_us"]
    pick = next(x["algorithm"] for x in j["candidates"] if x["picked"])
    def cell(name):
        return "%.1f (%.2f)" % (c[name]["max_rank_us"], c[name]["max_rank_us"] / lin)
    if "setup" in c["pairing"]:
        setup = "%d / %d" % (c["pairing"]["setup"]["rounds"], c["cumulative"]["setup"]["rounds"])
        kib = "%.0f / %.0f" % (c["pairing"]["setup"]["max_rank_bytes"] / 1024, c["cumulative"]["setup"]["max_rank_bytes"] / 1024)
    else:
        setup = kib = "(sequential)"
    cp = "%.2f / %.2f" % (c["pairing"]["critical_path_us"] / c["linear"]["critical_path_us"],
                          c["cumulative"]["critical_path_us"] / c["linear"]["critical_path_us"])
    print("| %s | %d | %s | %d | %.1f | %s | %s | %s | %s | %s | %s |" % (j["graph"], j["ranks"], j["op"], j["block_bytes"], lin,
          cell("pairing"), cell("cumulative"), cp, pick, setup, kib))
PY
echo "wrote $out.md"
