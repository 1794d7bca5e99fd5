#!/usr/bin/env python3
"""Held-out check of the phase_overlap choice (offline, no simulation): overlap_replay.py chose 0.5 with the
refit+lo prices on the same 71 main-job points it then scored. Here the value is chosen by the same rule on
all points but one platform (or np, or d) and scored on the points left out, the prices fixed at refit+lo.

The rule (phase_overlap_notes.md): among the values X in --values whose picks on the training points make no
pick more than 1 % slower than the library's (committed prices, sum), the one with most picks within 5 % of
the best variant, then fewest slower than the loop by more than 5 %, then the smallest X. X = 0 is the sum
(always allowed), X = 1 the max.

    python3 bench/smpi/overlap_holdout.py --cartplan BIN FILES...   # FILES: the halo_*_p*_n*_k*.txt of halo_vs_linear.md
Prints, per key and per value held out, X chosen on the rest and the held-out tallies (the library's in
brackets), then the folds of each key together."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import overlap_replay as o  # noqa: E402

VALUES = [round(0.1 * i, 1) for i in range(11)]
KEYS = ["platform", "np", "d"]


def form(x):
    return "sum" if x == 0 else ("max" if x == 1 else f"overlap {x}")


def tally(rows, base, idx):
    """(within 5 % of the best, slower than the loop by > 5 %, worse than base's pick by > 1 %) over idx."""
    within = sum(rows[i][3] <= o.TOL * rows[i][4] for i in idx)
    slower = sum(rows[i][3] > o.TOL * rows[i][5] for i in idx)
    worse = sum(rows[i][3] > 1.01 * base[i][3] for i in idx)
    return within, slower, worse


def choose(table, base, idx):
    """The rule above on the points idx; table: X -> evaluate() rows over every point."""
    best = None
    for x in sorted(table):
        within, slower, worse = tally(table[x], base, idx)
        if worse == 0 and (best is None or (within, -slower) > best[0]):
            best = ((within, -slower), x)
    return best[1]


def folds(runs, key):
    """(value, held-out indices, training indices) for each value of run[key]."""
    for v in sorted({str(r[key]) for r in runs}, key=lambda s: (len(s), s)):
        test = [i for i, r in enumerate(runs) if str(r[key]) == v]
        yield v, test, [i for i in range(len(runs)) if str(runs[i][key]) != v]


def report(runs, table, base):
    """The markdown tables: in-sample, then one row per fold and one per key's folds together."""
    everything = range(len(runs))
    x = choose(table, base, everything)
    w, s, wo = tally(table[x], base, everything)
    bw, bs, _ = tally(base, base, everything)
    print(f"In sample (chosen and scored on all {len(runs)} points): X = {x}, within 5 % {w} ({bw}), "
          f"slower than the loop {s} ({bs}), picks worse {wo}")
    print()
    print("| held out | points | X chosen on the rest | within 5 % of the best (library) | slower than the loop (library) "
          "| picks worse than the library's (> 1 %) |")
    print("|---|---|---|---|---|---|")
    for key in KEYS:
        total = [0] * 6
        for v, test, train in folds(runs, key):
            x = choose(table, base, train)
            w, s, wo = tally(table[x], base, test)
            bw, bs, _ = tally(base, base, test)
            total = [a + b for a, b in zip(total, [len(test), w, bw, s, bs, wo])]
            print(f"| {key} = {v} | {len(test)} | {x} | {w} ({bw}) | {s} ({bs}) | {wo} |")
        n, w, bw, s, bs, wo = total
        print(f"| **each {key} in turn, together** | {n} | | **{w} ({bw})** | **{s} ({bs})** | **{wo}** |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cartplan", required=True)
    ap.add_argument("--model-dir", default="bench/results/smpi")
    ap.add_argument("--prices", default="refit+lo")
    ap.add_argument("--values", type=lambda t: [float(x) for x in t.split(",")], default=VALUES)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    pts = o.points(a.cartplan, a.files, a.model_dir)
    base = o.evaluate(pts, "committed", "sum", "mean")
    table = {x: o.evaluate(pts, a.prices, form(x), "mean") for x in a.values}
    report([run for run, _, _ in pts], table, base)


if __name__ == "__main__":
    main()
