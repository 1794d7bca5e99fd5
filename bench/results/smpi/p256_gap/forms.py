#!/usr/bin/env python3
"""overlap_replay.py's tallies for a few (prices, form) pairs on any set of main-job run files (offline): auto
within 5 % of the best variant, slower than the linear loop by more than 5 %. Used to judge the forms on the
2-D p = 64 points re-timed with 24 back-to-back calls (p256_gap.md). From the repository root:
    python3 bench/results/smpi/p256_gap/forms.py bazel-bin/tools/cartplan FILES"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "smpi"))
import overlap_replay as o  # noqa: E402

PAIRS = [("committed", "sum"), ("refit+lo", "overlap 0.5"), ("nic", "max"), ("refit+lo", "max"), ("nic", "overlap 0.2")]


def main():
    pts = o.points(sys.argv[1], sys.argv[2:], "bench/results/smpi")
    print(f"| prices | form | auto within 5 % of the best | slower than the loop by > 5 % | of |")
    print("|---|---|---|---|---|")
    for prices, form in PAIRS:
        rows = o.evaluate(pts, prices, form, "mean")
        within = sum(m <= o.TOL * best for _, _, _, m, best, _ in rows)
        slower = sum(m > o.TOL * loop for _, _, _, m, best, loop in rows)
        print(f"| {prices} | {form} | {within} | {slower} | {len(rows)} |")


if __name__ == "__main__":
    main()
