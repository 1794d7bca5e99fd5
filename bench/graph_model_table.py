#!/usr/bin/env python3
"""Formats the JSON lines of bench/graph_model.sh (`cartplan graph explain --format json`, one
line per graph, op and block size) as the markdown table of bench/results/graph_model.md.

    python3 bench/graph_model_table.py bench/results/graph_model.jsonl > bench/results/graph_model.md
"""
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
