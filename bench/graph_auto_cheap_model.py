#!/usr/bin/env python3
# Table of bench/graph_auto_cheap_model.sh: graph auto's pick from every candidate against its
# pick from the cheap-to-construct ones (linear and the grids), model predictions.
import json
import sys

GAIN = 0.10  # engine/graph/choose.h kGraphGain
ASPECT = 8  # engine/graph/auto_candidates.h kMaxGridAspect


def grid_usable(cands):
    """auto_candidates.h's grid_usable: a grid row of 2 or more dimensions, largest <= ASPECT x smallest."""
    return any(c["algorithm"] == "grid" and len(c.get("dims", [])) >= 2 and max(c["dims"]) <= ASPECT * min(c["dims"]) for c in cands)


def default_pick(cands):
    """The default list (auto) in a persistent init: linear and the grids if p has a usable grid, else all."""
    return pick([x for x in cands if x["algorithm"] in ("linear", "grid")]) if grid_usable(cands) else pick(cands)


def name(c):
    return c["algorithm"] + ("" if "dims" not in c else " " + "x".join(map(str, c["dims"])))


def pick(cands):
    """auto's rule: the cheapest combining candidate if >= GAIN cheaper than linear, else linear."""
    linear = cands[0]
    others = [c for c in cands[1:] if c["max_rank_us"] > 0]
    if not others:
        return linear
    best = min(others, key=lambda c: c["max_rank_us"])
    return best if best["max_rank_us"] <= (1 - GAIN) * linear["max_rank_us"] else linear


def main(path):
    rows = [json.loads(line) for line in open(path)]
    print("Model predictions (max-over-ranks us of `cartplan graph explain`), not measurements. all = auto's")
    print("pick from every candidate; cheap = its pick from linear and the grids only (what auto gets")
    print("without constructing pairing or cumulative). loss = cheap / all (1.00: nothing lost), by the max over")
    print("ranks auto prices with; cp = the same two picks' critical paths (phase by phase, waiting on partners:")
    print("closer to SMPI for pairing and cumulative, bench/results/smpi/graph_sim_check.md).")
    print("default = the pick of the default list (auto) in a persistent init: cheap where p has a usable grid")
    print(f"(2 or more dimensions, largest <= {ASPECT} x smallest), all where it has none (prime or badly factored p).")
    print("Command: `bash bench/graph_auto_cheap_model.sh`.\n")
    expensive = [r for r in rows if pick(r["candidates"])["algorithm"] in ("pairing", "cumulative")]
    print(f"points: {len(rows)}; where auto's pick from all is pairing or cumulative: {len(expensive)}\n")
    print("| graph | p | model | op | block B | linear us | all: pick (us) | cheap: pick (us) | loss | cp us all / cheap | default: pick, loss |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    worst = worst_default = 1.0
    for r in expensive:
        c = r["candidates"]
        a = pick(c)
        ch = pick([x for x in c if x["algorithm"] in ("linear", "grid")])
        loss = ch["max_rank_us"] / a["max_rank_us"]
        worst = max(worst, loss)
        d = default_pick(c)
        dloss = d["max_rank_us"] / a["max_rank_us"]
        worst_default = max(worst_default, dloss)
        print(f"| {r['graph']} | {r['ranks']} | {r['model']} | {r['op']} | {r['block_bytes']} | {c[0]['max_rank_us']:.2f} | "
              f"{name(a)} ({a['max_rank_us']:.2f}) | {name(ch)} ({ch['max_rank_us']:.2f}) | {loss:.2f} | {a['critical_path_us']:.2f} / {ch['critical_path_us']:.2f} | "
              f"{name(d)}, {dloss:.2f} |")
    print(f"\nworst loss (cheap): {worst:.2f}; worst loss (default): {worst_default:.2f}")
    # Summary of picks at every point.
    from collections import Counter
    print("\n| auto's pick from all | points |\n|---|---|")
    for k, v in sorted(Counter(pick(r["candidates"])["algorithm"] for r in rows).items()):
        print(f"| {k} | {v} |")


if __name__ == "__main__":
    main(sys.argv[1])
