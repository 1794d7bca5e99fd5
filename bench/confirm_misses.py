#!/usr/bin/env python3
"""Measures again, with many more repetitions and several seeds, every point where auto missed
the best candidate by more than 10% in exchange_bench --candidates CSVs, and says whether the
miss is confirmed.

A sweep runs 10-20 repetitions per point; at 1-5 µs per call on a noisy machine two requests
of one program already differ by more than 10% at about a third of the points (the A/A floor
of candidates_table.py). One such run cannot tell a wrong choice from noise. Here each miss
runs alone, with only the cartplan requests and the candidates, REPS repetitions (default 200)
per seed, and the verdict is:
  confirmed      pick / best > 1.10 under every seed (the model chose a slower plan)
  not confirmed  pick / best <= 1.10 under every seed (the sweep's miss was noise)
  mixed          otherwise
Each re-run also reports its own A/A spread: the largest slowest / fastest ratio between
requests that ran equal programs at that point.

Usage: confirm_misses.py --exchange-bench BIN --cost-model [NP=]FILE... [--reps N] [--seeds 1,2,3]
                         [--csv OUT] CSV...       (markdown on stdout)
  --cost-model FILE     the model of every process count (the sweep's own, to replay its choice)
  --cost-model NP=FILE  the model of one process count (repeatable; bench/scale.sh's per-np models)"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import candidates_table as ct  # noqa: E402


def misses(points):
    """[(key, judged)] of the points whose pick / best is above the tolerance."""
    out = []
    for key in sorted(points):
        judged = ct.judge(points[key])
        if judged and judged[4] is not None and judged[4] > ct.TOLERANCE:
            out.append((key, judged))
    return out


def model_for(models, np_):
    return models.get(np_) or models.get(None)


def rerun(args, key, model, seed, csv_path):
    np_, dims, stencil, op, m = key
    cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--mca", "mpi_yield_when_idle", "1", "-np", str(np_),
           args.exchange_bench, "--stencil", stencil, "--m", str(m), "--ops", op, "--reps", str(args.reps),
           "--warmup", "5", "--no-blocking", "--only", "cart_", "--candidates", "--cost-model", model,
           "--seed", str(seed), "--csv", csv_path]
    if dims:
        cmd += ["--dims", dims.replace("x", ",")]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"confirm_misses.py: {' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return ct.load([csv_path])


def aa_worst(vs):
    spreads = ct.aa_spreads({"point": vs})
    return spreads[-1][0] if spreads else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--exchange-bench", required=True)
    ap.add_argument("--cost-model", action="append", required=True)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--csv", help="write every re-run's rows here")
    ap.add_argument("csvs", nargs="+")
    args = ap.parse_args()
    models = {}
    for spec in args.cost_model:
        np_, sep, path = spec.partition("=")
        if sep and not np_.isdigit():
            sys.exit(f"confirm_misses.py: --cost-model '{spec}': expected FILE or NP=FILE")
        models[int(np_) if sep else None] = path if sep else spec
    for path in models.values():
        if not os.path.isfile(path):
            sys.exit(f"confirm_misses.py: cost model '{path}' does not exist")
    seeds = [int(s) for s in args.seeds.split(",")]

    found = misses(ct.load(args.csvs))
    lines = ["# Auto's misses measured again", "",
             f"Points of {', '.join(os.path.basename(c) for c in args.csvs)} where pick / best was above "
             f"{ct.TOLERANCE:.2f}, each re-run alone with {args.reps} repetitions per seed (seeds {args.seeds}): "
             "pick / best, with the re-run's own A/A spread (the largest slowest / fastest ratio between "
             "requests of equal programs) in brackets.", "",
             "| config | op | m | sweep: pick / best | " + " | ".join(f"seed {s}" for s in seeds) + " | verdict |",
             "|---|---|---|---|" + "---|" * len(seeds) + "---|"]
    verdicts = {"confirmed": 0, "not confirmed": 0, "mixed": 0}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for key, (best, _, pick, _, ratio) in found:
            model = model_for(models, key[0])
            if not model:
                sys.exit(f"confirm_misses.py: no --cost-model for np = {key[0]}")
            cells, ratios = [], []
            for seed in seeds:
                path = os.path.join(tmp, "rerun.csv")
                points = rerun(args, key, model, seed, path)
                vs = points.get(key)
                judged = ct.judge(vs) if vs else None
                if not judged or judged[4] is None:
                    sys.exit(f"confirm_misses.py: the re-run of {ct.config(key)} {key[3]} m={key[4]} has no auto pick")
                ratios.append(judged[4])
                cells.append(f"{judged[4]:.2f} ({judged[2]} vs {judged[0]}; A/A {ct.fmt(aa_worst(vs))})")
                with open(path) as f:
                    rows += [dict(r, seed=seed) for r in csv.DictReader(f)]
            if all(r > ct.TOLERANCE for r in ratios):
                verdict = "confirmed"
            elif all(r <= ct.TOLERANCE for r in ratios):
                verdict = "not confirmed"
            else:
                verdict = "mixed"
            verdicts[verdict] += 1
            lines.append(f"| {ct.config(key)} | {key[3]} | {key[4]} | {ratio:.2f} ({pick} vs {best}) | "
                         + " | ".join(cells) + f" | {verdict} |")
    if not found:
        lines.append("| (no misses) | | | |" + " |" * len(seeds) + " |")
    lines += ["", f"{len(found)} misses: {verdicts['confirmed']} confirmed, {verdicts['not confirmed']} not confirmed, "
              f"{verdicts['mixed']} mixed.", ""]
    print("\n".join(lines))
    if args.csv and rows:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
