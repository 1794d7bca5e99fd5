#!/usr/bin/env python3
"""Summary of bench/osu_neighbor.sh: medians over the alternating pairs, the drop-in's ratio to
plain Open MPI (target: at most 1.05 at every point), its per-call overhead (forced direct against
plain at np=2), and, where it accelerates, its ratio to the native API's same plan (target: within
10 %). Writes osu_summary.md and one osu_<config>_<op>_<form>.dat per curve for gnuplot.

    python3 bench/osu_summary.py osu.csv osu_verdicts.txt OUTDIR
"""
import collections
import csv
import re
import statistics
import sys

# Each run's median batch time per call, averaged over ranks (osu_neighbor.cc): OSU's whole-loop
# average (avg_us, also in the CSV) moves with every preemption on a shared machine.
FIELD = "median_us"

def load(path):
    runs = collections.defaultdict(list)
    for row in csv.DictReader(open(path)):
        key = (row["config"], int(row["np"]), row["op"], row["form"], row["mode"], int(row["bytes"]))
        runs[key].append(float(row[FIELD]))
    return runs


def verdicts(path):
    """(config, op, form, bytes) -> 'accelerated' | 'passed through', from CARTPLAN_VERBOSE (the form
    as osu_neighbor.sh names it, from the header line before each verbose run)."""
    out, current = {}, None
    for line in open(path):
        m = re.match(r"== (\S+) (\S+) (\S+)", line)
        if m:
            current = m.groups()
            continue
        m = re.match(r"cartplan_interpose: communicator \d+ (\S+) (\S+) (\d+)-byte blocks: (accelerated|passed through)", line)
        if m and current:
            out[(current[0], m.group(1), current[2], int(m.group(3)))] = m.group(4)
    return out


def spread(values):
    return f"{min(values):.2f}-{max(values):.2f}"


def curves(runs):
    shapes = sorted({k[:4] for k in runs})
    for shape in shapes:
        sizes = sorted({k[5] for k in runs if k[:4] == shape})
        yield shape, sizes


def summary(runs, verdict, outdir):
    lines = ["# The drop-in against plain Open MPI: OSU-style neighbourhood benchmarks", "",
             "`bash bench/osu_neighbor.sh` (bench/osu_neighbor.cc). Each value is the median, over the",
             "alternating runs, of each run's time per call: the median over batches of 20 calls on each",
             "rank, averaged over ranks (OSU's whole-loop average is in osu.csv as avg_us).",
             "ratio = drop-in / Open MPI (target: at most 1.05 at every point); `acc` = the sizes the",
             "drop-in accelerated (CARTPLAN_VERBOSE), the others passed through. A/A = the preloaded",
             "library switched off (CARTPLAN_INTERPOSE=0) / Open MPI: the same calls, so its spread is",
             "the noise of that configuration on this machine.", "",
             "| config | op | form | sizes | worst ratio (bytes) | median ratio | over 1.05 | A/A worst | A/A over 1.05 | acc |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    detail = []
    native_rows = []
    for (config, np_, op, form), sizes in curves(runs):
        ratios, acc, dat, aa = [], [], [], []
        for b in sizes:
            plain = runs.get((config, np_, op, form, "plain", b))
            pre = runs.get((config, np_, op, form, "preload", b))
            nat = runs.get((config, np_, op, form, "native", b))
            off = runs.get((config, np_, op, form, "disabled", b))
            if not plain or not pre:
                continue
            r = statistics.median(pre) / statistics.median(plain)
            ratios.append((r, b))
            if off:
                aa.append(statistics.median(off) / statistics.median(plain))
            v = verdict.get((config, op, form, b), "?")
            if v == "accelerated":
                acc.append(b)
                if nat:
                    native_rows.append((config, op, form, b, statistics.median(pre), statistics.median(nat)))
            dat.append(f"{b} {statistics.median(plain)} {statistics.median(pre)} {statistics.median(nat) if nat else 'NaN'}")
            detail.append(f"| {config} | {op} | {form} | {b} | {statistics.median(plain):.2f} ({spread(plain)}) | "
                          f"{statistics.median(pre):.2f} ({spread(pre)}) | {r:.2f} | {v} |")
        if not ratios:
            continue
        with open(f"{outdir}/osu_{config}_{op}_{form}.dat", "w") as f:
            f.write("\n".join(dat) + "\n")
        worst = max(ratios)
        over = sum(1 for r, _ in ratios if r > 1.05)
        acc_text = "all" if len(acc) == len(ratios) else ("none" if not acc else ",".join(map(str, acc)))
        aa_worst = f"{max(aa):.2f}" if aa else "-"
        aa_over = str(sum(1 for x in aa if x > 1.05)) if aa else "-"
        lines.append(f"| {config} | {op} | {form} | {len(ratios)} | {worst[0]:.2f} ({worst[1]}) | "
                     f"{statistics.median(r for r, _ in ratios):.2f} | {over} | {aa_worst} | {aa_over} | {acc_text} |")
    lines += overhead(runs) + native(native_rows)
    lines += ["", "## Every point", "", "| config | op | form | bytes | Open MPI us (range) | drop-in us (range) | ratio | verdict |",
              "|---|---|---|---|---|---|---|---|"] + detail
    open(f"{outdir}/osu_summary.md", "w").write("\n".join(lines) + "\n")
    print("\n".join(lines[:40]))


def overhead(runs):
    """Forced direct (the same messages as Open MPI) minus plain: cartplan's per-call overhead."""
    out = ["", "## Per-call overhead (graph-shift-np2: one message per process in both, forced direct)", "",
           "Median over 1..64 bytes of (drop-in forced direct - Open MPI), us; targets: blocking 0.1,",
           "non-blocking 0.3.", "", "| config | op | form | overhead us | per size |", "|---|---|---|---|---|"]
    for (config, np_, op, form), sizes in curves(runs):
        diffs = []
        for b in sizes:
            d = runs.get((config, np_, op, form, "direct", b))
            p = runs.get((config, np_, op, form, "plain", b))
            if d and p and b <= 64:
                diffs.append(statistics.median(d) - statistics.median(p))
        if diffs and config.startswith("graph-shift"):
            out.append(f"| {config} | {op} | {form} | {statistics.median(diffs):+.2f} | "
                       f"{' '.join(f'{x:+.2f}' for x in diffs)} |")
    return out


def native(rows):
    out = ["", "## Where the drop-in accelerates: against the native API's same plan", "",
           "ratio = drop-in / native (target: at most 1.10).", "",
           "| config | op | form | bytes | drop-in us | native us | ratio |", "|---|---|---|---|---|---|---|"]
    for config, op, form, b, pre, nat in rows:
        out.append(f"| {config} | {op} | {form} | {b} | {pre:.2f} | {nat:.2f} | {pre / nat:.2f} |")
    if rows:
        worst = max(pre / nat for *_, pre, nat in rows)
        within = sum(1 for *_, pre, nat in rows if pre / nat <= 1.10)
        out.append(f"\nWithin 10 %: {within} of {len(rows)} points (worst {worst:.2f}).")
    return out


if __name__ == "__main__":
    summary(load(sys.argv[1]), verdicts(sys.argv[2]), sys.argv[3])
