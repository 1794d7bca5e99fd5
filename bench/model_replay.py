#!/usr/bin/env python3
"""Replays the optimizer's choice on measured candidates with another cost model, without MPI:
for every point of exchange_bench --candidates CSVs it asks `cartplan plan --explain` (with the
point's grid and block sizes, as the MPI backend prices a request) which candidate the model
picks, and judges that pick by the measured times of the candidates in the CSV. A way to try a
model change (a cost-model file) against many measurements in seconds; the verdict still has to
be measured again with the new model, since hybrid searches and order searches may produce
plans the CSV never ran.

Usage: model_replay.py --cartplan BIN --cost-model FILE [--list] [--accuracy] CSV...
  --accuracy: also measured / predicted of every measured direct, combining and log-round
              candidate (median, 10th and 90th percentile, overall and per kind): how well the
              model prices the plans, apart from whether it orders them right. Hybrid and
              "best order" candidates are left out: another model may build other plans under
              those names.
The pick is always the optimizer's own ("chosen:"): this script does not re-implement its rule.
(Replaying the rule with other gains, once --refinement-gain, re-implemented
engine::pick_candidate; it lives on in bench/research/margin_history.py, unsupported.)
Prints "within 10% of the best measured candidate in N of M points" (and, with --list, every
point's pick, best and ratio). Points whose pick has no measured candidate are counted apart."""
import argparse
import csv
import re
import subprocess
import sys
from collections import defaultdict

TOLERANCE = 1.10
# Candidates whose plan does not depend on the model (--accuracy).
ACCURACY_KINDS = ["direct", "combining", "log-round"]
LINE = re.compile(r"^[* ] (.+?) \(rounds .*\| total ([0-9.]+) us$")


def block_args(stencil, op, m, cartplan):
    """--block-bytes for alltoall/allgather (m ints); --block-sizes m^(d-z) ints for alltoallv."""
    if op != "alltoallv":
        return ["--block-bytes", str(4 * m)]
    out = subprocess.run([cartplan, "plan", "--op", "alltoall", "--stencil", stencil, "--algo", "direct"],
                         capture_output=True, text=True, check=True).stdout
    offsets = re.search(r'"neighborhood": (\[.*?\]\s*\])', out, re.S)
    import json
    sizes = []
    for off in json.loads(offsets.group(1)):
        z = sum(1 for x in off if x != 0)
        sizes.append(0 if z == 0 else 4 * m ** (len(off) - z))
    return ["--block-sizes", ",".join(map(str, sizes))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cartplan", required=True)
    ap.add_argument("--cost-model", required=True)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--accuracy", action="store_true")
    ap.add_argument("csv", nargs="+")
    a = ap.parse_args()
    points = defaultdict(dict)
    for path in a.csv:
        with open(path) as f:
            for r in csv.DictReader(f):
                if r["variant"].startswith("cand:"):
                    key = (r["dims"], r["stencil"], r["op"], int(r["m"]))
                    points[key][r["variant"][5:]] = float(r["median_us"])
    within = total = unmeasured = 0
    ratios = defaultdict(list)  # kind -> measured / predicted
    for (dims, stencil, op, m), measured in sorted(points.items()):
        args = [a.cartplan, "plan", "--op", "allgather" if op == "allgather" else "alltoall", "--stencil", stencil,
                "--dims", dims.replace("x", ","), "--cost-model", a.cost_model, "--explain"]
        args += block_args(stencil, op, m, a.cartplan)
        out = subprocess.run(args, capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"model_replay.py: {' '.join(args)}: {out.stderr.strip()}")
        preds = {mm.group(1): float(mm.group(2)) for mm in map(LINE.match, out.stdout.splitlines()) if mm}
        for kind in ACCURACY_KINDS:
            if kind in preds and kind in measured and preds[kind] > 0:
                ratios[kind].append(measured[kind] / preds[kind])
        chosen = re.search(r"^chosen: (.+)$", out.stdout, re.M)
        if not chosen:
            sys.exit(f"model_replay.py: no 'chosen:' line in the output of {' '.join(args)}")
        pick = chosen.group(1)
        best = min(measured, key=measured.get)
        if pick not in measured:
            unmeasured += 1
            if a.list:
                print(f"{stencil} {dims} {op} m={m}: pick {pick} not measured")
            continue
        ratio = measured[pick] / measured[best]
        total += 1
        within += ratio <= TOLERANCE
        if a.list:
            flag = "" if ratio <= TOLERANCE else "  MISS"
            print(f"{stencil:22} {dims:10} {op:9} m={m:<5} pick {pick:24} best {best:24} {ratio:5.2f}{flag}")
    print(f"within 10% of the best measured candidate in {within} of {total} points"
          + (f" ({unmeasured} picks not measured)" if unmeasured else ""))
    if a.accuracy:
        for kind in ["all"] + ACCURACY_KINDS:
            values = sorted(v for k in ACCURACY_KINDS for v in ratios[k]) if kind == "all" else sorted(ratios[kind])
            if values:
                print(f"measured / predicted, {kind}: median {quantile(values, 0.5):.2f}, 10th percentile "
                      f"{quantile(values, 0.1):.2f}, 90th percentile {quantile(values, 0.9):.2f} ({len(values)} candidates)")


def quantile(sorted_values, q):
    """The q-quantile by linear interpolation between the sorted values."""
    pos = q * (len(sorted_values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


if __name__ == "__main__":
    main()
