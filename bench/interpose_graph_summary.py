"""Summary of bench/interpose_graph.sh: per configuration, op, form and block size, the median
over the alternating pairs of each mode's median batch latency (osu_neighbor's median_us), its
min-max over the pairs, and each mode's ratio to plain Open MPI (below 1: faster than plain).

    python3 bench/interpose_graph_summary.py runs.csv > summary.md
"""
import csv
import statistics
import sys
from collections import defaultdict

ORDER = ["plain", "disabled", "auto", "combining", "baseline"]


def load(path):
    runs = defaultdict(list)
    for row in csv.DictReader(open(path)):
        key = (row["config"], row["op"], row["form"], int(row["bytes"]))
        runs[key + (row["mode"],)].append(float(row["median_us"]))
    return runs


def table(runs):
    keys = sorted({k[:4] for k in runs})
    modes = [m for m in ORDER if any(k[4] == m for k in runs)]
    head = ["config", "op", "form", "bytes"] + [m + " us (min-max)" for m in modes] + [m + "/plain" for m in modes[1:]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    ratios = defaultdict(list)
    for k in keys:
        med = {m: statistics.median(runs[k + (m,)]) for m in modes if runs.get(k + (m,))}
        cells = [k[0], k[1], k[2], str(k[3])]
        for m in modes:
            v = runs.get(k + (m,), [])
            cells.append("%.2f (%.2f-%.2f)" % (med[m], min(v), max(v)) if v else "-")
        for m in modes[1:]:
            r = med[m] / med["plain"] if m in med and med.get("plain") else None
            if r is not None:
                ratios[(k[0], m)].append(r)
            cells.append("%.2f" % r if r is not None else "-")
        lines.append("| " + " | ".join(cells) + " |")
    return lines, ratios


def main():
    runs = load(sys.argv[1])
    lines, ratios = table(runs)
    print("# The drop-in on graphs: medians over alternating pairs (median batch latency, us)\n")
    print("Ratio to plain Open MPI per configuration and mode, median [min, max] over its points:\n")
    for (config, mode), rs in sorted(ratios.items()):
        print("- %s, %s: %.2f [%.2f, %.2f] over %d points" % (config, mode, statistics.median(rs), min(rs), max(rs), len(rs)))
    print()
    print("\n".join(lines))


if __name__ == "__main__":
    main()
