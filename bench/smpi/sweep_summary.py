#!/usr/bin/env python3
"""Summary of SMPI sweep tables (bench/results/smpi/sweep_p*.md) as markdown.

    python3 bench/smpi/sweep_summary.py bench/results/smpi/sweep_p256.md [...] > summary.md

Per platform and p: the points, how many have auto faster than the linear loop by more than 5 %,
slower by more than 5 %, the range of linear / auto; then every point where auto runs more than
5 % above the best simulated candidate (the issue's criterion), with auto's plan and the best
candidate each as "simulated (predicted)" microseconds, and the point's same-message spread: the
linear loop and cartplan's direct plan send the same messages, and so do auto's persistent and
blocking forms, so the larger ratio of their simulated times (larger over smaller) shows how much
the timing itself moves between equal programs (docs/smpi.md, "Timing").
"""
import collections
import sys


def rows(path):
    out = []
    for line in open(path):
        if not line.startswith("| ") or line.startswith("| platform"):
            continue
        c = [x.strip() for x in line.strip().strip("|").split(" | ")]
        if len(c) < 20:
            continue
        names = ["direct", "combining", "hybrid", "log-round"]
        cands = dict(zip(names, c[9:13]))
        out.append({"platform": c[0], "p": int(c[1]), "stencil": c[2], "op": c[3], "m": int(c[4]), "linear": c[6],
                    "auto": c[7], "auto_blocking": c[8], "cands": cands, "best": c[13], "miss": float(c[14]), "gain": float(c[15]), "data": c[18]})
    return out


def us(text):
    return float(text.split()[0])


def spread(r):
    pairs = [(us(r["linear"]), us(r["cands"]["direct"]))]
    if r["auto_blocking"] != "-":
        pairs.append((us(r["auto"]), us(r["auto_blocking"])))
    return max(max(a, b) / min(a, b) for a, b in pairs)


def main(paths):
    rs = [r for p in paths for r in rows(p)]
    groups = collections.defaultdict(list)
    for r in rs:
        groups[(r["platform"], r["p"])].append(r)
    print("| platform | p | points | data OK | auto faster than linear (> 5 %) | auto slower (> 5 %) | linear / auto, min - max | "
          "auto within 5 % of best | same-message spread, max | points with spread <= 1.05 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (pl, p), g in sorted(groups.items()):
        gains = [r["gain"] for r in g]
        print(f"| {pl} | {p} | {len(g)} | {sum(r['data'] == 'OK' for r in g)} | {sum(x > 1.05 for x in gains)} | "
              f"{sum(x < 1 / 1.05 for x in gains)} | {min(gains):.2f} - {max(gains):.2f} | {sum(r['miss'] <= 1.05 for r in g)} of {len(g)} | {max(spread(r) for r in g):.2f} | {sum(spread(r) <= 1.05 for r in g)} |")
    misses = [r for r in rs if r["miss"] > 1.05]
    print(f"\nMisses (auto / best > 1.05): {len(misses)} of {len(rs)} points.\n")
    if misses:
        print("| platform | p | stencil | op | m | auto: simulated (predicted) plan | best: simulated (predicted) | auto / best | linear (predicted) | same-message spread |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for r in sorted(misses, key=lambda r: (r["platform"], r["p"], r["stencil"], r["op"], r["m"])):
            print(f"| {r['platform']} | {r['p']} | {r['stencil']} | {r['op']} | {r['m']} | {r['auto']} | "
                  f"{r['best']} {r['cands'][r['best']]} | {r['miss']:.2f} | {r['linear']} | {spread(r):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
