#!/usr/bin/env python3
"""Plot of issue 33's SMPI halo runs: per point (d, n, k) and platform the halo API's auto over the
best variant and the hand-written exchange over the best (1.0 = the best; the dashed line is the
5 % target). Writes halo_api_p<P>.dat and, with gnuplot, halo_api_p<P>.png next to the runs.

    python3 bench/smpi/halo_plot.py 64 bench/results/smpi/halo_*_p64_d*_n*_k*.txt
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from halo_table import parse  # noqa: E402


def main():
    p, paths = sys.argv[1], sys.argv[2:]
    runs = [parse(x) for x in paths]
    runs = [r for r in runs if "cartplan halo API" in r["variants"] and r.get("np") == int(p)]
    points = sorted({(r["d"], r["n"], r["k"]) for r in runs})
    out_dir = os.path.dirname(paths[0]) or "."
    dat = os.path.join(out_dir, f"halo_api_p{p}.dat")
    with open(dat, "w") as f:
        f.write("# x label platform auto/best hand-written/best\n")
        for r in runs:
            vs = r["variants"]
            best = min(v[1] for v in vs.values())
            hand = vs.get("hand-written dimwise")
            x = points.index((r["d"], r["n"], r["k"]))
            f.write(f"{x} d{r['d']}n{r['n']}k{r['k']} {r['platform']} {vs['cartplan halo API'][1] / best:.4f} "
                    f"{(hand[1] / best) if hand else float('nan'):.4f}\n")
    png = os.path.join(out_dir, f"halo_api_p{p}.png")
    labels = ", ".join(f'"d{d} n{n} k{k}" {i}' for i, (d, n, k) in enumerate(points))
    script = f"""set terminal pngcairo size 1000,500
set output "{png}"
set title "SMPI p = {p}: time over the best variant's (1 = best; dashed: +5 %)"
set xtics ({labels}) rotate by -30
set xrange [-0.5:{len(points) - 0.5}]
set ylabel "time / best"
set key top left
plot 1.05 with lines dt 2 lc rgb "gray" notitle, \\
  for [pl in "fattree torus dragonfly"] "{dat}" using ($1 + (pl eq "torus" ? 0.1 : pl eq "dragonfly" ? 0.2 : 0)):(strcol(3) eq pl ? $4 : 1/0) with points pt 7 title "halo API auto, ".pl, \\
  for [pl in "fattree torus dragonfly"] "{dat}" using ($1 + (pl eq "torus" ? 0.1 : pl eq "dragonfly" ? 0.2 : 0)):(strcol(3) eq pl ? $5 : 1/0) with points pt 6 title "hand-written, ".pl
"""
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
    print(png)


if __name__ == "__main__":
    main()
