#!/usr/bin/env python3
"""How often a refinement predicted cheaper really ran faster, over every committed run: reads
each distinct version, in git history, of candidate CSVs (exchange_bench --candidates), and for
every point where a refinement (hybrid, log-round, another dimension order) was predicted
cheaper than the better of direct and combining, compares its measured median with that plan's.
The rows are buckets of the predicted margin (1 - refinement / base), the measure behind
engine::kRefinementGain. Old versions were priced by the models of their day, so read the table
as evidence about the model family, not about today's model alone.

Usage: margin_history.py [--repo DIR] [--newest N] [--hybrid-gains G,G,..] CSV_PATH...
  CSV_PATH: paths inside the repository, e.g. bench/results/cpp-2core/exchange_np2.csv
  --newest N: only each file's N newest distinct versions (the runs priced by recent models)
  --hybrid-gains: also replay engine::pick_candidate on the CSVs' own predictions with
                  kRefinementGain (0.03) and each hybrid gain G, and count per file the points
                  whose pick ran within 10 % of the best measured candidate"""
import argparse
import csv
import io
import subprocess
from collections import defaultdict

REFINEMENT_GAIN = 0.03  # engine::kRefinementGain
BUCKETS = [(0.0, 0.03), (0.03, 0.06), (0.06, 0.10), (0.10, 0.20), (0.20, 1.0)]


def kind(name):
    if name.startswith("hybrid"):
        return "hybrid"
    if name.startswith("log-round"):
        return "log-round"
    return "order"  # "combining, best order" and the like


def versions(repo, path):
    """The distinct texts of `path` over the history, newest first."""
    revs = subprocess.run(["git", "-C", repo, "log", "--format=%H", "--", path], capture_output=True, text=True,
                          check=True).stdout.split()
    seen = set()
    for rev in revs:
        shown = subprocess.run(["git", "-C", repo, "show", f"{rev}:{path}"], capture_output=True, text=True)
        if shown.returncode != 0 or shown.stdout in seen:
            continue  # deleted at that revision, or the same run committed again
        seen.add(shown.stdout)
        yield shown.stdout


def points_of(text):
    """{point: {candidate: (measured, predicted)}} of one CSV (empty before predictions existed)."""
    rows = csv.DictReader(io.StringIO(text))
    points = defaultdict(dict)
    if "predicted_us" not in (rows.fieldnames or []):
        return points
    for r in rows:
        if r["variant"].startswith("cand:") and r["predicted_us"] not in ("", "nan"):
            key = (r.get("dims", ""), r["stencil"], r["op"], r["m"])
            points[key][r["variant"][5:]] = (float(r["median_us"]), float(r["predicted_us"]))
    return points


def pick(predicted, gain, hybrid_gain):
    """engine::pick_candidate on predictions {candidate: us}: the cheaper of direct and combining,
    unless a refinement is predicted more than its gain below it (then the cheapest such). Only
    refinements: the cheapest. model_replay.py uses it too."""
    bases = [n for n in ("direct", "combining") if n in predicted]
    if not bases:
        return min(predicted, key=predicted.get)
    base = min(bases, key=predicted.get)
    cleared = [n for n in predicted if n not in ("direct", "combining")
               and predicted[n] < predicted[base] * (1 - (hybrid_gain if kind(n) == "hybrid" else gain))]
    return min(cleared + [base], key=predicted.get)


def within(points, gain, hybrid_gain):
    """(points whose pick ran within 10 % of the best measured candidate, points)."""
    hits = 0
    for cands in points.values():
        best = min(m for m, _ in cands.values())
        chosen = pick({n: p for n, (_, p) in cands.items()}, gain, hybrid_gain)
        hits += cands[chosen][0] <= 1.10 * best
    return hits, len(points)


def cases(points):
    """(kind, predicted margin, measured refinement / measured base) of one CSV's points."""
    for cands in points.values():
        bases = [cands[n] for n in ("direct", "combining") if n in cands]
        if not bases:
            continue
        base_measured, base_predicted = min(bases, key=lambda x: x[1])
        for name, (measured, predicted) in cands.items():
            if name in ("direct", "combining"):
                continue
            margin = 1 - predicted / base_predicted
            if margin > 0:
                yield kind(name), margin, measured / base_measured


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", default=".")
    ap.add_argument("--newest", type=int, default=0)
    ap.add_argument("--hybrid-gains", default="")
    ap.add_argument("csv", nargs="+")
    a = ap.parse_args()
    hybrid_gains = [float(g) for g in a.hybrid_gains.split(",") if g]
    found = defaultdict(list)
    replay = defaultdict(lambda: [0, 0])  # (path, hybrid gain) -> [within, points]
    runs = 0
    for path in a.csv:
        for i, text in enumerate(versions(a.repo, path)):
            if a.newest and i >= a.newest:
                break
            runs += 1
            points = points_of(text)
            for k, margin, ratio in cases(points):
                found[k].append((margin, ratio))
            for g in hybrid_gains:
                hits, n = within(points, REFINEMENT_GAIN, g)
                replay[(path, g)][0] += hits
                replay[(path, g)][1] += n
    print(f"# Refinements predicted cheaper than direct and combining, over {runs} committed CSV versions")
    print()
    print("| kind | predicted margin | points | ran faster | ran more than 1.10x slower |")
    print("|---|---|---|---|---|")
    for k in sorted(found):
        for lo, hi in BUCKETS:
            sel = [r for m, r in found[k] if lo <= m < hi]
            if sel:
                print(f"| {k} | {lo:.2f}-{hi:.2f} | {len(sel)} | {sum(r < 1 for r in sel)} | {sum(r > 1.10 for r in sel)} |")
    if hybrid_gains:
        print()
        print(f"Points whose pick ran within 10 % of the best candidate, replayed with gain {REFINEMENT_GAIN} "
              "and each hybrid gain:")
        print()
        print("| file | " + " | ".join(f"hybrid {g}" for g in hybrid_gains) + " |")
        print("|---|" + "---|" * len(hybrid_gains))
        for path in a.csv:
            print(f"| {path} | " + " | ".join(f"{replay[(path, g)][0]} of {replay[(path, g)][1]}" for g in hybrid_gains)
                  + " |")


if __name__ == "__main__":
    main()
