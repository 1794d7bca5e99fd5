#!/usr/bin/env python3
"""Formats bench/graph_grid_model.sh's JSON lines (`cartplan graph explain --format json` with
--algo linear and --algo grid, one line each per graph, op and block size) with the pairing and
cumulative predictions of bench/results/graph_model.jsonl as bench/results/graph_grid_model.md.

    python3 bench/graph_grid_model_table.py bench/results/graph_grid_model.jsonl bench/results/graph_model.jsonl
"""
import json, sys

KGAIN = 0.10  # engine/graph/choose.h kGraphGain


def key(j):
    return (j["graph"], j["op"], j["block_bytes"])


grid_rows = [json.loads(l) for l in open(sys.argv[1])]
pairing = {key(j): {c["algorithm"]: c for c in j["candidates"]} for j in map(json.loads, open(sys.argv[2]))}
merged = {}
for j in grid_rows:
    row = merged.setdefault(key(j), {"ranks": j["ranks"], "grids": []})
    for c in j["candidates"]:
        if c["algorithm"] == "linear":
            row["linear"] = c
        else:
            row["grids"].append(c)

print("Model predictions of `cartplan graph explain` (built-in cost model: alpha 1 us, phase 0.5 us,")
print("beta 0.0005 us/B, copy 0.0002 us/B, rendezvous 2 us above 4064 B), max over ranks of the per-rank")
print("time; ratio = candidate / linear; auto = what `--algo auto` runs (the cheapest candidate if at")
print("least 10 % cheaper than linear). Model predictions, not measurements.")
print("Command: `bash bench/graph_grid_model.sh` (pairing and cumulative from bench/results/graph_model.jsonl).")
print()
print("| graph | p | op | block B | linear us | pairing (ratio) | cumulative (ratio) | grid 2-D (ratio) | grid 3-D (ratio) | grid messages of the busiest rank, sent + received (linear) | grid set-up rounds, KiB sent by one rank | auto |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for k, row in merged.items():
    lin = row["linear"]["max_rank_us"]
    other = pairing.get(k)
    if other and abs(other["linear"]["max_rank_us"] - lin) > 0.01:
        sys.exit("linear differs from graph_model.jsonl for %s" % (k,))
    cands = {"linear": lin}
    cells = []
    for name in ("pairing", "cumulative"):
        if other and name in other:
            us = other[name]["max_rank_us"]
            cands[name] = us
            cells.append("%.1f (%.2f)" % (us, us / lin))
        else:
            cells.append("-")
    best_grid = None
    for d in (2, 3):
        g = next((c for c in row["grids"] if len(c["dims"]) == d), None)
        if g is None:
            cells.append("-")
            continue
        cands["grid " + "x".join(map(str, g["dims"]))] = g["max_rank_us"]
        cells.append("%s: %.1f (%.2f)" % ("x".join(map(str, g["dims"])), g["max_rank_us"], g["max_rank_us"] / lin))
        if best_grid is None or g["max_rank_us"] < best_grid["max_rank_us"]:
            best_grid = g
    msgs = "%d (%d)" % (best_grid["max_rank_messages"], row["linear"]["max_rank_messages"]) if best_grid else "-"
    setup = "%d, %.1f" % (best_grid["setup"]["rounds"], best_grid["setup"]["max_rank_bytes"] / 1024) if best_grid else "-"
    best = min((us, name) for name, us in cands.items() if name != "linear")
    auto = best[1] if best[0] <= (1 - KGAIN) * lin else "linear"
    print("| %s | %d | %s | %d | %.1f | %s | %s | %s | %s |" % (k[0], row["ranks"], k[1], k[2], lin, " | ".join(cells), msgs, setup, auto))
