#!/usr/bin/env python3
"""Auto's pick at every measured SMPI sweep point under the committed models against DIR's models
of the same names (e.g. placement_fit.py's re-fits), priced with the platforms' ranks per node:
prints each point where the two picks differ, with both picks' measured times and the best.

  PYTHONPATH=bench python3 bench/research/placement_picks.py --cartplan BIN DIR
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import term_evidence  # noqa: E402  its sweep points and its pick (cartplan plan --explain)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cartplan", required=True)
    ap.add_argument("models_dir")
    a = ap.parse_args()
    cache = {}
    key = lambda k: (os.path.basename(k[0]),) + k[1:]  # noqa: E731
    committed = {key(k): (k, m) for k, m in term_evidence.smpi_points(None).items()}
    other = {key(k): (k, m) for k, m in term_evidence.smpi_points(a.models_dir).items()}
    for point in sorted(committed):
        (kc, measured), (ko, _) = committed[point], other[point]
        if kc[0] == ko[0]:
            continue
        pc, po = term_evidence.pick(a.cartplan, *kc, cache), term_evidence.pick(a.cartplan, *ko, cache)
        if pc != po:
            print(f"{' '.join(map(str, point))}: committed {pc} {measured.get(pc)} us, {a.models_dir} {po} "
                  f"{measured.get(po)} us, best {min(measured.values())} us")


if __name__ == "__main__":
    main()
