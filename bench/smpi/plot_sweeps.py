#!/usr/bin/env python3
"""Plots of the SMPI sweep tables (bench/results/smpi/sweep_p*.md) with gnuplot.

    python3 bench/smpi/plot_sweeps.py bench/results/smpi/sweep_p256.md [more tables] --out-dir bench/results/smpi

For each table sweep_<TAG>.md (one p): gain_<TAG>.png, the linear loop's time over auto's (above 1: cartplan's
choice is faster) against the block size m, one panel per platform, one line per
neighbourhood and operation; and miss_<TAG>.png, auto / best simulated candidate (the issue's
criterion: at most 1.05), same layout. The data files gnuplot reads are written beside them
(*.dat), so each plotted point can be found in the table, and through its command reproduced.
"""
import argparse
import collections
import os
import subprocess
import sys


def rows(path):
    """Table rows as dicts (platform, p, stencil, op, m, gain, miss), data rows only."""
    out = []
    for line in open(path):
        if not line.startswith("| ") or line.startswith("| platform"):
            continue
        c = [x.strip() for x in line.strip().strip("|").split(" | ")]
        if len(c) < 20:
            continue
        out.append({"platform": c[0], "p": int(c[1]), "stencil": c[2].strip("`"), "op": c[3], "m": int(c[4]),
                    "miss": float(c[14]), "gain": float(c[15])})
    return out


def series(rs, key):
    """{platform: {label: [(m, value)]}} sorted by m."""
    out = collections.defaultdict(lambda: collections.defaultdict(list))
    for r in rs:
        out[r["platform"]][f"{r['stencil']} {r['op']}"].append((r["m"], r[key]))
    for per in out.values():
        for pts in per.values():
            pts.sort()
    return out


def plot(rs, key, ylabel, p, out_dir, stem, hline, tag):
    by = series(rs, key)
    measure = "back to back" if "b2b" in tag else "sync: at m >= 100 it undercounts, see README"
    platforms = sorted(by)
    script = [f"set terminal pngcairo size {520 * len(platforms)},560 font ',9' noenhanced", f"set output '{out_dir}/{stem}_{tag}.png'",
              f"set multiplot layout 1,{len(platforms)} title '{ylabel}, p = {p} (SimGrid SMPI, simulated; sweep_{tag}.md; {measure})'",
              "set logscale x", "set logscale y" if stem == "gain" else "unset logscale y", "set xlabel 'block size m (ints)'", f"set ylabel '{ylabel}'", "set key below font ',7'",
              "set grid", "set style data linespoints"]
    for pl in platforms:
        dat = f"{out_dir}/{stem}_{tag}_{pl}.dat"
        labels = sorted(by[pl])
        with open(dat, "w") as f:
            for label in labels:
                f.write(f"# {label}\n")
                for m, v in by[pl][label]:
                    f.write(f"{m} {v}\n")
                f.write("\n\n")
        parts = [f"'{dat}' index {i} using 1:2 title '{label}'" for i, label in enumerate(labels)]
        parts.append(f"{hline} with lines dashtype 2 lc 'black' title '{hline}'")
        script += [f"set title '{pl}'", "plot " + ", ".join(parts)]
    script.append("unset multiplot")
    subprocess.run(["gnuplot"], input="\n".join(script) + "\n", text=True, check=True)
    return f"{out_dir}/{stem}_{tag}.png"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tables", nargs="+")
    ap.add_argument("--out-dir", default="bench/results/smpi")
    a = ap.parse_args(argv)
    for t in a.tables:
        rs = rows(t)
        if not rs:
            sys.exit(f"plot_sweeps.py: no rows in {t}")
        base = os.path.basename(t)[:-len(".md")] if t.endswith(".md") else os.path.basename(t)
        base = base[len("sweep_"):] if base.startswith("sweep_") else base
        for p in sorted({r["p"] for r in rs}):
            sel = [r for r in rs if r["p"] == p]
            tag = base if base.startswith(f"p{p}") else f"{base}_p{p}"
            print(plot(sel, "gain", "linear loop / auto", p, a.out_dir, "gain", 1, tag))
            print(plot(sel, "miss", "auto / best candidate", p, a.out_dir, "miss", 1.05, tag))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
