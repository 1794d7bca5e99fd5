#!/usr/bin/env python3
"""Counts, over tools/halo run files of the same points in two directories, how often each halo API
plan takes exactly the time (to the printed 0.01 us) of the variant that sends the same messages:
halo API direct / the linear loop, halo API combining / Cart_alltoallw combining, halo API dimwise /
the hand-written exchange; and prints each point's ratios.

    python3 bench/smpi/halo_twins.py BEFORE_DIR AFTER_DIR   # the halo_*.txt files present in both"""
import os
import re
import sys

PAIRS = [("halo API direct", "linear Isend/Irecv"), ("halo API combining", "cartplan combining"),
         ("halo API dimwise", "hand-written dimwise")]
ROW = re.compile(r"^(cartplan \w+(?: \w+)?|halo API \w+|hand-written dimwise|linear Isend/Irecv)\s+\S+\s+([\d.]+)\s")


def times(path):
    out = {}
    with open(path) as f:
        for line in f:
            m = ROW.match(line)
            if m:
                out[m.group(1).strip()] = float(m.group(2))
    return out


def main():
    before, after = sys.argv[1], sys.argv[2]
    names = sorted(b for b in os.listdir(after) if b.startswith("halo_") and os.path.exists(os.path.join(before, b)))
    equal = {p: [0, 0] for p in PAIRS}
    n = 0
    print("| point | " + " | ".join(f"{a} / {t}" for a, t in PAIRS) + " |")
    print("|---" * (len(PAIRS) + 1) + "|")
    for b in names:
        old, new = times(os.path.join(before, b)), times(os.path.join(after, b))
        if not all(x in t for t in (old, new) for p in PAIRS for x in p):
            continue
        n += 1
        cells = []
        for a, t in PAIRS:
            equal[(a, t)][0] += old[a] == old[t]
            equal[(a, t)][1] += new[a] == new[t]
            cells.append(f"{old[a] / old[t]:.3f} -> {new[a] / new[t]:.3f}")
        print(f"| {b[5:-4]} | " + " | ".join(cells) + " |")
    print()
    for (a, t), (e0, e1) in equal.items():
        print(f"{a} = {t}: {e0} -> {e1} of {n} points")


if __name__ == "__main__":
    main()
