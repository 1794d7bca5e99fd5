#!/usr/bin/env python3
"""Summary of bench/osu_paired.sh: per configuration, op, form and mode, the median over launches
of each launch's within-launch ratio mpi/pmpi (the drop-in against Open MPI's own entry point in
the same launch; target at most 1.05 at every size), and on the shift forced direct the per-call
overhead mpi_us - pmpi_us (targets: blocking 0.1 us, non-blocking 0.3 us).

    python3 bench/osu_paired_summary.py osu_paired.csv osu_paired.md
"""
import collections
import csv
import statistics
import sys

TARGET = 1.05
OVERHEAD_TARGET = {"blocking": 0.1, "nonblocking": 0.3}


def load(path):
    runs = collections.defaultdict(list)
    for row in csv.DictReader(open(path)):
        key = (row["config"], row["op"], row["form"], row["mode"])
        runs[key].append((int(row["bytes"]), float(row["mpi_us"]), float(row["pmpi_us"]), float(row["ratio"])))
    return runs


def per_size(rows, index):
    """bytes -> list over launches of column `index`."""
    out = collections.defaultdict(list)
    for r in rows:
        out[r[0]].append(r[index])
    return out


def ratio_table(runs):
    lines = ["| config | op | form | mode | launches | worst median ratio (bytes) | median over sizes | sizes over %.2f | launch spread of the worst |" % TARGET,
             "|---|---|---|---|---|---|---|---|---|"]
    for (config, op, form, mode), rows in sorted(runs.items()):
        ratios = per_size(rows, 3)
        med = {b: statistics.median(v) for b, v in ratios.items()}
        worst = max(med, key=med.get)
        over = sum(1 for v in med.values() if v > TARGET)
        launches = len(ratios[worst])
        spread = "%.2f-%.2f" % (min(ratios[worst]), max(ratios[worst]))
        lines.append("| %s | %s | %s | %s | %d | %.3f (%d) | %.3f | %d | %s |" % (
            config, op, form, mode, launches, med[worst], worst, statistics.median(med.values()), over, spread))
    return lines


def overhead_table(runs):
    lines = ["| op | form | overhead us (median over launches, 1-64 B) | per size 1..64 B | target |", "|---|---|---|---|---|"]
    for (config, op, form, mode), rows in sorted(runs.items()):
        if mode != "direct":
            continue
        diffs = collections.defaultdict(list)
        for b, mpi, pmpi, _ in rows:
            if b <= 64:
                diffs[b].append(mpi - pmpi)
        per = [statistics.median(diffs[b]) for b in sorted(diffs)]
        target = OVERHEAD_TARGET.get(form)
        lines.append("| %s | %s | %+.3f | %s | %s |" % (op, form, statistics.median(per), " ".join("%+.2f" % v for v in per),
                                                  "%.1f" % target if target else "-"))
    return lines


NATIVE_TARGET = 1.10


def native_table(runs):
    """Where the native API ran: per size, median preload ratio / median native ratio (each against
    Open MPI in its own launches), the drop-in against the native API's same plan."""
    lines = ["| config | op | form | worst drop-in / native (bytes) | median over sizes | sizes over %.2f | per size |" % NATIVE_TARGET,
             "|---|---|---|---|---|---|---|"]
    for (config, op, form, mode), rows in sorted(runs.items()):
        if mode != "native" or (config, op, form, "preload") not in runs:
            continue
        nat = {b: statistics.median(v) for b, v in per_size(rows, 3).items()}
        pre = {b: statistics.median(v) for b, v in per_size(runs[(config, op, form, "preload")], 3).items()}
        q = {b: pre[b] / nat[b] for b in sorted(nat) if b in pre}
        worst = max(q, key=q.get)
        over = sum(1 for v in q.values() if v > NATIVE_TARGET)
        lines.append("| %s | %s | %s | %.3f (%d) | %.3f | %d | %s |" % (config, op, form, q[worst], worst, statistics.median(q.values()),
                                                                   over, " ".join("%.2f" % q[b] for b in sorted(q))))
    return lines


def main(csv_path, md_path):
    runs = load(csv_path)
    text = ["# The drop-in against Open MPI in one launch (bench/osu_paired.sh)", "",
            "ratio = mpi_us / pmpi_us of one launch: the same calls through the MPI_ entry points (the drop-in's,",
            "when preloaded) and the PMPI_ ones (Open MPI's own), in alternating batches. Per size the median over",
            "launches of that ratio; `plain` (nothing preloaded) is the method's A/A control; `native` is cartplan's",
            "native API against the same PMPI_ calls on a graph communicator. Target: at most %.2f." % TARGET, ""]
    text += ratio_table(runs)
    text += ["", "## The drop-in against the native API's same plan (target at most %.2f)" % NATIVE_TARGET, "",
             "Sizes 1 B to 4 KB in order. Where the verdict passes through, the drop-in runs Open MPI's algorithm, not cartplan's plan.", ""]
    text += native_table(runs)
    text += ["", "## Per-call overhead on the shift, forced direct (mpi_us - pmpi_us, us)", ""]
    text += overhead_table(runs)
    open(md_path, "w").write("\n".join(text) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
