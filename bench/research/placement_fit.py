#!/usr/bin/env python3
"""Offline re-fit of committed SMPI calibrations with the placement terms (engine/placement.h):
off_node_alpha_us, off_node_beta_us_per_byte and node_link_us_per_byte.

For every row of a calibrate log (bench/results/smpi/calibrate_<platform>_p<P>.txt) it asks
`cartplan plan --explain` for the row's plan (--algo direct / combining / hybrid / loground,
combining-reversed as the combining order reversed) on MPI_Dims_create's grid with the platform's
cores per node as --ranks-per-node (block placement, as the platforms' hostfiles), checks that
the CLI's plan has the row's messages, phases and wire bytes (rows that do not match are left
out and counted), and takes the three placement counts from it; the other counts are the row's
own (what calibrate counted for the lowering it ran). Then it fits every term as calibrate does
(non-negative least squares on relative errors, terms that may undercut beta fitted as their sum
with it) and prints R^2, the worst relative error and the groups whose fitted cheapest variant
ran within 10 % of the fastest, with and without the placement columns. With --out-dir it writes
DIR/cost_model_<platform>_p<P>.json: the committed model with the re-fitted prices.

The simulation is deterministic, so these rows are what a re-run of calibrate would measure;
the counts are the engine's. bench/calibrate fits the same columns on a live run.

Usage (PYTHONPATH=bench, for pick_check.dims_create):
  PYTHONPATH=bench python3 bench/research/placement_fit.py --cartplan BIN [--out-dir DIR] FILE...
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "smpi"))
from peer_term_fit import ROW, nnls  # noqa: E402  calibrate's row format and its fit
from pick_check import dims_create  # noqa: E402
import platforms  # noqa: E402

# kCostTerms' order (engine/cost_model.h) and, per term, the term whose price it may undercut.
TERMS = ["alpha_us", "phase_us", "beta_us_per_byte", "copy_us_per_byte", "rendezvous_us", "single_copy_us_per_byte",
         "pipeline_us", "pipeline_us_per_byte", "off_node_alpha_us", "off_node_beta_us_per_byte",
         "node_link_us_per_byte"]
UNDERCUTS = {"pipeline_us_per_byte": "beta_us_per_byte", "off_node_beta_us_per_byte": "beta_us_per_byte"}
PLACEMENT = TERMS[8:]
ALGO = {"direct": "direct", "combining": "combining", "combining-packed": "combining",
        "combining-reversed": "combining", "hybrid": "hybrid", "log-round": "loground"}


def explain(cartplan, args):
    """The chosen candidate's counts (kCostTerms' order) and its dimension order."""
    out = subprocess.run([cartplan, "plan", "--explain"] + args, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"placement_fit.py: {' '.join(args)}: {out.stderr.strip()}")
    line = [x for x in out.stdout.splitlines() if x.startswith("* ")][0]
    order = re.search(r"order \(([0-9,]*)\)", line).group(1)
    counts = [float(re.match(r"\s*\S+ ([0-9.e+-]+)", seg).group(1)) for seg in line.split("): ", 1)[1].split(" | ")[:-1]]
    return counts, order


def row_counts(cartplan, row, platform, np_, model):
    """(counts of the row's plan with the placement ones, or None when the CLI's plan differs)."""
    spec, op, variant, m = row.group(1), row.group(2), row.group(3), int(row.group(4))
    dims = dims_create(np_, int(re.search(r"d=(\d+)", spec).group(1)))
    args = ["--op", op, "--stencil", spec, "--block-bytes", str(4 * m), "--dims", ",".join(map(str, dims)),
            "--ranks-per-node", str(platforms.value(platform, "cores_per_node")), "--algo", ALGO[variant]]
    # Hybrid plans depend on the model that searched them: the backend's at calibration time,
    # the built-in one (no model file was found then).
    args += [] if variant == "hybrid" else ["--cost-model", model]
    if variant == "combining-reversed":
        order = explain(cartplan, args)[1].split(",")
        args += ["--dim-order", ",".join(reversed(order))]
    counts, _ = explain(cartplan, args)
    own = [float(row.group(i)) for i in (5, 6, 7, 8, 9, 10, 11, 12)]
    if counts[0] != own[0] or counts[1] != own[1] or counts[2] != own[2]:
        return None
    return own + counts[8:11]


def columns(x):
    """calibrate's columns: a term that may undercut another is fitted as their sum."""
    x = list(x)
    for term, base in UNDERCUTS.items():
        x[TERMS.index(base)] -= x[TERMS.index(term)]
    return x


def fit(rows, use):
    """Prices (kCostTerms' order) fitted on relative errors with the columns in `use`."""
    X = [[(v if j in use else 0.0) / t for j, v in enumerate(columns(x))] for _, x, t in rows]
    c = nnls(X, [1.0] * len(rows), sweeps=40000)
    prices = list(c)
    for term, base in UNDERCUTS.items():
        prices[TERMS.index(term)] -= c[TERMS.index(base)]
    # A term no row counts (or left out) stays 0, as calibrate leaves it.
    return [p if j in use and any(x[j] for _, x, _ in rows) else 0.0 for j, p in enumerate(prices)]


def judge(rows, prices):
    """R^2, worst relative error, groups whose predicted cheapest ran within 10 % of the fastest."""
    pred = [sum(p * v for p, v in zip(prices, x)) for _, x, _ in rows]
    ys = [t for _, _, t in rows]
    mean = sum(ys) / len(ys)
    r2 = 1 - sum((y - p) ** 2 for y, p in zip(ys, pred)) / sum((y - mean) ** 2 for y in ys)
    worst = max(abs(p - y) / y for y, p in zip(ys, pred))
    groups = collections.defaultdict(list)
    for (key, _, t), p in zip(rows, pred):
        groups[key[:3]].append((p, t))
    well = sum(min(g)[1] <= 1.1 * min(t for _, t in g) for g in groups.values())
    return r2, worst, well, len(groups)


def refit(cartplan, path, out_dir):
    found = re.search(r"calibrate_(torus|fattree|dragonfly)_p(\d+)\.txt$", path)
    platform, np_ = found.group(1), int(found.group(2))
    model = os.path.join(os.path.dirname(path), f"cost_model_{platform}_p{np_}.json")
    rows, unmatched = [], 0
    with open(path) as f:
        for line in f:
            row = ROW.match(line)
            if not row:
                continue
            x = row_counts(cartplan, row, platform, np_, model)
            if x is None:
                unmatched += 1
                continue
            rows.append(((row.group(1), row.group(2), row.group(4), row.group(3)), x, float(row.group(16))))
    without = fit(rows, set(range(8)))
    with_terms = fit(rows, set(range(11)))
    print(f"{path}: {len(rows)} rows ({unmatched} left out: the CLI's plan differs), "
          f"{platforms.value(platform, 'cores_per_node')} ranks per node")
    for label, prices in (("without placement", without), ("with placement", with_terms)):
        r2, worst, well, groups = judge(rows, prices)
        print(f"  {label}: R^2 {r2:.3f}, worst relative error {worst:.3f}, cheapest within 10 % in {well} of {groups} "
              f"groups; " + ", ".join(f"{n} {p:.6g}" for n, p in zip(TERMS, prices) if p))
    if out_dir:
        with open(model) as f:
            j = json.load(f)
        j.update(dict(zip(TERMS, with_terms)))
        r2, worst, well, groups = judge(rows, with_terms)
        j.update({"method": f"offline re-fit of {os.path.basename(path)}'s rows with the placement counts "
                            f"(bench/research/placement_fit.py), every term, relative non-negative least squares",
                  "r2": round(r2, 6), "worst_relative_error": round(worst, 6), "points": len(rows),
                  "choices_within_10_percent": f"{well} of {groups}"})
        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(out_dir, os.path.basename(model)), "w") as f:
            json.dump(j, f, indent=2)
            f.write("\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cartplan", required=True)
    ap.add_argument("--out-dir")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    for path in a.files:
        refit(a.cartplan, path, a.out_dir)


if __name__ == "__main__":
    main()
