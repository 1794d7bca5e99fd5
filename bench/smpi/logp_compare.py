#!/usr/bin/env python3
"""Pairs main-job runs made with SMPI's default collective algorithms and with the log-p ones
(bench/smpi/logp_collectives.sh): for every file in the log-p directory with a same-named file in the
default directory, one markdown row with the halo API's three plans, the linear loop and the best
variant under each, so that what the global collectives' algorithms (the barrier before each
variant, init's agreement) change in back-to-back times shows. Simulated times, deterministic.

    python3 bench/smpi/logp_compare.py DEFAULT_DIR LOGP_DIR
    # e.g. bench/results/smpi/nic_overlap/retimed bench/results/smpi/logp_collectives
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import halo_table  # noqa: E402

PLANS = [("direct", "halo API direct"), ("combining", "halo API combining"), ("dimwise", "halo API dimwise"),
         ("loop", "linear Isend/Irecv")]


def cells(run):
    vs = run["variants"]
    best = min(vs, key=lambda name: vs[name][1])
    return [f"{vs[name][1]:.2f}" if name in vs else "-" for _, name in PLANS] + [f"{best} {vs[best][1]:.2f}"]


def main(default_dir, logp_dir):
    names = sorted(f for f in os.listdir(logp_dir) if f.startswith("halo_") and f.endswith(".txt"))
    head = [p for p, _ in PLANS]
    print("| platform | p | d | n | k | " + " | ".join(f"default: {h}" for h in head) + " | default: best | "
          + " | ".join(f"log-p: {h}" for h in head) + " | log-p: best |")
    print("|" + "---|" * (5 + 2 * (len(head) + 1)))
    for name in names:
        if not os.path.exists(os.path.join(default_dir, name)):
            continue
        a, b = halo_table.parse(os.path.join(default_dir, name)), halo_table.parse(os.path.join(logp_dir, name))
        if not a["variants"] or not b["variants"]:
            continue
        key = [b["platform"], str(b["np"]), str(b["d"]), str(b["n"]), str(b["k"])]
        print("| " + " | ".join(key + cells(a) + cells(b)) + " |")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
