#!/usr/bin/env python3
"""Offline test of a cost-model term: does it improve bench/calibrate's fit?
--term peers (default): a per-peer term (distinct processes a plan talks to per phase; the
context switches of an oversubscribed node), computed here for the rows of direct and combining
plans (plain, packed, reversed order; the hybrid and log-round rows are left out, their plans
depend on the model that built them). The grid of each row is MPI_Dims_create's for the np and
the neighbourhood's d.
(--term fragments, which refitted calibrate's "fragments" column, went with the fast-box term
itself: docs/cost-model.md, "Dropped terms". Rows of older calibrate outputs that still carry
that column are read, the column ignored.)
Refits the rows by non-negative least squares on relative errors, as calibrate does, with and
without the extra column, and prints the median and 90th-percentile relative error and in how
many (neighbourhood, op, size, pass) groups the fitted model's cheapest plan ran within 10 % of
the fastest.

Usage: peer_term_fit.py [--np N] FILE...
       (FILE: calibrate output, or main_job.txt with one calibration per np, each followed by its
        "## np=N" runs; '-' for stdin)
  python3 bench/peer_term_fit.py --np 8 bench/results/cpp-2core/calibrate_np8.txt
  git show 2c55f68:bench/results/cpp-2core/main_job.txt | python3 bench/peer_term_fit.py -"""
import argparse
import collections
import itertools
import re
import sys

from pick_check import dims_create  # MPI_Dims_create's grid, as the benchmarks get it

# Columns of a calibrate row, in its order, then the tried term.
NAMES = ["msg", "phase", "wire", "copied", "rdv", "sc", "pipe_n", "pipe_b", "seg", "scat", "extra"]
ROW = re.compile(r"^\s+(\S+)\s+(\S+)\s+(\S+)\s+m=(\d+)\s+messages\s+(\d+) phases\s+(\d+) wire\s+(\d+) copied\s+(\d+) "
                 r"rendezvous\s+(\d+) single-copy\s+(\d+) pipelined\s+(\d+) \(\s*(\d+) B\) segments\s+(\d+) "
                 r"scattered\s+(\d+)(?:\s+fragments\s+(\d+))?\s+median\s+([0-9.]+) us")


def box_offsets(spec):
    """The offsets of box:d=D,n=N,f=F (the zero offset included, as calibrate runs them)."""
    kv = dict(item.split("=") for item in spec.split(":")[1].split(","))
    d, n, f = int(kv["d"]), int(kv["n"]), int(kv["f"])
    return list(itertools.product(range(f, f + n), repeat=d))


def peers(spec, direct, dims):
    """Distinct other processes a rank sends to or receives from, summed over phases: direct has
    one phase with every offset; combining one phase per dimension with its coordinates."""
    offsets = box_offsets(spec)
    if direct:
        return len({r for o in offsets for sign in (1, -1)
                    for r in [tuple((sign * c) % n for c, n in zip(o, dims))] if any(r)})
    return sum(len({(sign * o[k]) % dims[k] for o in offsets for sign in (1, -1)} - {0}) for k in range(len(dims)))


def load(lines, np_):
    """[(key, features, median µs)] of a calibrate output: the direct and combining rows with the
    per-peer column."""
    rows = []
    for line in lines:
        m = ROW.match(line)
        if not m:
            continue
        spec = m.group(1)
        if m.group(3) in ("direct", "combining", "combining-packed", "combining-reversed"):
            extra = peers(spec, m.group(3) == "direct", dims_create(np_, int(re.search(r"d=(\d+)", spec).group(1))))
        else:
            continue
        x = [float(m.group(i)) for i in range(5, 15)] + [extra]
        rows.append(((spec, m.group(2), int(m.group(4)), m.group(3)), x, float(m.group(16))))
    return rows


def nnls(X, y, sweeps=400):
    """Non-negative least squares by cyclic coordinate descent (what calibrate does)."""
    n = len(X[0])
    c = [0.0] * n
    cols = [[r[j] for r in X] for j in range(n)]
    norms = [sum(v * v for v in col) for col in cols]
    res = list(y)
    for _ in range(sweeps):
        for j in range(n):
            if norms[j] == 0:
                continue
            new = max(0.0, c[j] + sum(cols[j][i] * res[i] for i in range(len(y))) / norms[j])
            step = new - c[j]
            if step:
                for i in range(len(y)):
                    res[i] -= step * cols[j][i]
                c[j] = new
    return c


def fit(rows, use):
    """The fit on relative errors: every row divided by its time, columns outside `use` zeroed."""
    X = [[(x[j] if j in use else 0.0) / t for j in range(len(x))] for _, x, t in rows]
    return nnls(X, [1.0] * len(rows))


def evaluate(rows, c, label):
    pred = lambda x: sum(a * b for a, b in zip(c, x))
    rel = sorted(abs(pred(x) - t) / t for _, x, t in rows)
    groups = collections.defaultdict(list)
    half = len(rows) // 2  # calibrate's two passes (without and with trailers) are groups apart
    for i, (k, x, t) in enumerate(rows):
        groups[k[:3] + (i >= half,)].append((k[3], t, pred(x)))
    ok = sum(min(v, key=lambda e: e[2])[1] <= 1.1 * min(t for _, t, _ in v) for v in groups.values())
    print(f"  {label}: median relative error {rel[len(rel) // 2]:.3f}, 90th percentile {rel[int(.9 * len(rel))]:.3f}; "
          f"choices within 10% {ok}/{len(groups)}; " + " ".join(f"{n}={v:.3g}" for n, v in zip(NAMES, c) if v))


def sections(lines, np_):
    """[(np, lines)]: the whole input for --np, else each calibration before its '## np=N' runs."""
    if np_:
        return [(np_, lines)]
    out, pending = [], []
    for line in lines:
        m = re.match(r"^## np=(\d+)", line)
        if m:
            if any(ROW.match(x) for x in pending):
                out.append((int(m.group(1)), pending))
            pending = []
        else:
            pending.append(line)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--np", type=int, help="the process count of a plain calibrate output")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    for path in args.files:
        lines = (sys.stdin if path == "-" else open(path)).read().splitlines()
        for np_, part in sections(lines, args.np):
            rows = load(part, np_)
            if not rows:
                continue
            print(f"{path} np={np_}: {len(rows)} rows")
            without, with_term = fit(rows, set(range(10))), fit(rows, set(range(11)))
            evaluate(rows, without, "without")
            evaluate(rows, with_term, "peers  ")


if __name__ == "__main__":
    main()
