#!/usr/bin/env python3
"""The main-job points where auto misses the best variant by more than 5 % or is slower than the linear loop by
more than 5 %, under overlap_replay.py's committed|sum and refit+lo|overlap 0.5 prices, with direct's and dimwise's
predicted and measured times. Run from the repository root:
    python3 bench/results/smpi/p256_gap/misses.py bazel-bin/tools/cartplan $(ls bench/results/smpi/halo_*_p*_n*_k*.txt | grep -v _sync)"""
import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "smpi"))
import overlap_replay as o
files = sys.argv[2:]
pts = o.points(sys.argv[1], files, "bench/results/smpi")
for prices, form in [("committed", "sum"), ("refit+lo", "overlap 0.5")]:
    print("##", prices, form)
    for run, pick, pred, m, best, loop in o.evaluate(pts, prices, form, "mean"):
        if m > o.TOL * loop or m > o.TOL * best:
            vs = run["variants"]
            print(f"{run['platform']:9} p{run['np']:<4} d{run['d']} n{run['n']:<3} k{run['k']} pick {pick:9} {m:8.2f} best {best:8.2f} loop {loop:8.2f}"
                  f" {'SLOWER' if m > o.TOL*loop else '      '} | pred/meas direct {pred['direct']:7.2f}/{vs['halo API direct'][1]:7.2f} dimwise {pred['dimwise']:7.2f}/{vs['halo API dimwise'][1]:7.2f}")
