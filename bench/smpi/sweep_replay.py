#!/usr/bin/env python3
"""Auto's pick at every committed SMPI sweep point (bench/results/smpi/sweep_*.md) under the committed
models and under each DIR's models of the same names (cost_model_<platform>_p<P>.json), judged by the
candidates' measured times: how many picks run within 5 % of the best measured candidate, and which do
not. The pick is the optimizer's own (`cartplan plan --explain`, priced with the platform's ranks per
node); simulated times do not depend on the model, so this is what a re-run with DIR's models would pick.
DIR must hold every model the sweeps name (p = 64 and p = 256 per platform).

  python3 bench/smpi/sweep_replay.py --cartplan BIN [DIR ...]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import term_evidence  # noqa: E402  the sweep points and the pick

TOL = 1.05


def tally(cartplan, models_dir, cache):
    """(within, points, misses): misses as (model file, grid, stencil, op, m, pick, its us, best us)."""
    within, total, misses = 0, 0, []
    points = term_evidence.smpi_points(models_dir)
    if models_dir:  # smpi_points falls back to the committed model where DIR lacks one: refuse that
        missing = sorted({os.path.basename(k[0]) for k in points if os.path.dirname(k[0]) != models_dir.rstrip("/")})
        if missing:
            sys.exit(f"sweep_replay.py: {models_dir} lacks {', '.join(missing)}")
    for key, measured in sorted(points.items()):
        chosen = term_evidence.pick(cartplan, *key, cache) if measured else None
        if chosen not in measured:
            continue
        total += 1
        best = min(measured.values())
        if measured[chosen] <= TOL * best:
            within += 1
        else:
            misses.append((os.path.basename(key[0]),) + key[1:] + (chosen, measured[chosen], best))
    return within, total, misses


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cartplan", required=True)
    ap.add_argument("dirs", nargs="*")
    a = ap.parse_args()
    cache = {}
    for models_dir in [None] + a.dirs:
        within, total, misses = tally(a.cartplan, models_dir, cache)
        print(f"### {models_dir or 'committed models'}: auto within 5 % of the best candidate at {within} of {total} points\n")
        print("| model | grid | stencil | op | m | pick | pick us | best us | pick / best |")
        print("|---|---|---|---|---|---|---|---|---|")
        for model, grid, stencil, op, m, chosen, us, best in misses:
            print(f"| {model} | {grid} | `{stencil}` | {op} | {m} | {chosen} | {us} | {best} | {us / best:.3f} |")
        print()


if __name__ == "__main__":
    main()
