#!/usr/bin/env python3
"""Whether a cost-model term changes auto's choices for the better, on committed measurements:
for every committed calibration and every measured point of its np (this machine's candidate
CSVs, also under the built-in model; the SMPI sweeps' measured direct, combining, hybrid and
log-round), auto's pick with the model as calibrated against its pick with the term set to 0 (`cartplan plan --explain`, as
model_replay.py asks it). Where the two picks differ and both were measured, the term helps if
the calibrated pick ran faster by more than NOISE, hurts if slower by more, else a tie.

Usage: term_evidence.py --cartplan BIN [--list] [--terms T,T,..] [--set NAME=PRICE,..] [--smpi-only] [--smpi-models DIR]
  (BIN prints the model line of the term table, commit 10d961f on; a term the binary no longer
  has changes nothing: replay dropped terms with a build from before their drop)
  --set: price NAME at PRICE in every model first (a term that calibrations do not carry yet,
  e.g. --set phase_max_us_per_byte=0.002 --terms phase_max_us_per_byte with a build of 2fa4fde:
  with it against without).
  --smpi-only: the SMPI sweeps alone. Points of a sweep table that a later table (in name order)
  times again count once, with the later times (sweep_p256_b2b.md's back-to-back rows replace
  sweep_p256.md's sync rows of the same points).
  --smpi-models DIR: replay the SMPI sweeps with DIR's model of the name a row names where DIR has
  one (a re-fit), else the committed one.
After the table, per term: at how many points (picks measured both ways) auto's pick with and
without the term is within 5 % of the best measured candidate.
Prints one line per term: points compared, picks changed, helps, hurts, ties, unmeasured, and
the summed measured time of the picks with and without the term (changed points only)."""
import argparse
import csv
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import defaultdict

import model_replay

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "smpi"))
import platforms  # noqa: E402

NOISE = 0.03
RESULTS = "bench/results"
# Terms and what "set to 0" zeroes (the pipeline's two prices go together).
TERMS = {
    "single_copy_us_per_byte": ["single_copy_us_per_byte"],
    "pipeline_us(+per_byte)": ["pipeline_us", "pipeline_us_per_byte"],
    "segment_us": ["segment_us"],
    "scatter_us_per_byte": ["scatter_us_per_byte"],
    # Tried, not kept (docs/cost-model.md): replay with a build of 2fa4fde, which has it.
    "phase_max_us_per_byte": ["phase_max_us_per_byte"],
    # The placement terms (engine/placement.h) together; SMPI points are priced with their
    # platform's ranks per node (--ranks-per-node), this machine's on one node.
    "placement": ["off_node_alpha_us", "off_node_beta_us_per_byte", "node_link_us_per_byte"],
    # Not zero but merged: struct messages above the limit priced as the single-copy ones.
    "pipeline as rendezvous": ["pipeline_us=rendezvous_us", "pipeline_us_per_byte=single_copy_us_per_byte"],
}
CPP_CSVS = {2: ["exchange_np2", "auto_np2", "confirm_auto_np2", "confirm_exchange_np2"],
            8: ["scale_np8", "confirm_scale_np8"]}
CPP_MODELS = {2: ["cost_model", "main_job_cost_model_np2"], 8: ["cost_model_np8", "main_job_cost_model_np8"]}
# MPI_Dims_create's grids of the SMPI sweeps (their txt files' "# process grid" lines).
SMPI_GRIDS = {(64, 3): "4x4x4", (256, 2): "16x16", (256, 3): "8x8x4", (256, 4): "4x4x4x4", (256, 5): "4x4x4x2x2",
              (1024, 3): "16x8x8", (1024, 5): "4x4x4x4x4"}
KINDS = ["direct", "combining", "hybrid", "log-round"]


def builtin_model(cartplan, tmp):
    """The built-in model as a file, from the model line of `cartplan plan --explain`."""
    out = subprocess.run([cartplan, "plan", "--op", "alltoall", "--stencil", "box:d=2,n=3,f=-1", "--explain"],
                         capture_output=True, text=True, check=True).stdout
    line = re.search(r"; model: (.*)$", out, re.M).group(1)
    j = {"schema": "cartplan.cost_model/2"}
    for item in line.split(","):
        name, value = item.split()
        j[name] = int(value) if name == "eager_limit_bytes" else float(value)
    path = os.path.join(tmp, "builtin.json")
    with open(path, "w") as f:
        json.dump(j, f)
    return path


def cpp_points(builtin):
    """(model path, dims, stencil, op, m) -> measured {kind: us}, this machine's candidate CSVs,
    for its calibrations of each np and the built-in model."""
    out = {}
    for np_, names in CPP_CSVS.items():
        points = defaultdict(dict)
        for name in names:
            with open(f"{RESULTS}/cpp-2core/{name}.csv") as f:
                for r in csv.DictReader(f):
                    if r["variant"].startswith("cand:"):
                        points[(r["dims"], r["stencil"], r["op"], int(r["m"]))][r["variant"][5:]] = float(r["median_us"])
        for model in [f"{RESULTS}/cpp-2core/{m}.json" for m in CPP_MODELS[np_]] + [builtin]:
            for key, measured in points.items():
                out[(model,) + key] = measured
    return out


def smpi_points(models_dir=None):
    """The same from the SMPI sweep tables (measured: the number before the parenthesis)."""
    out = {}
    for path in sorted(glob.glob(f"{RESULTS}/smpi/sweep_*.md")):
        with open(path) as f:
            for line in f:
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                if len(cells) < 13 or not cells[1].isdigit():
                    continue
                p, stencil, op, m, model = int(cells[1]), cells[2].strip("`"), cells[3], int(cells[4]), cells[5]
                d = int(re.search(r"d=(\d+)", stencil).group(1))
                measured = {}
                for kind, cell in zip(KINDS, cells[9:13]):
                    if re.match(r"^[0-9.]+", cell):
                        measured[kind] = float(cell.split()[0])
                path = f"{RESULTS}/smpi/{model}"
                if models_dir and os.path.exists(os.path.join(models_dir, model)):
                    path = os.path.join(models_dir, model)
                out[(path, SMPI_GRIDS[(p, d)], stencil, op, m)] = measured
    return out


def with_prices(points, assignments, tmp):
    """`points` with every model replaced by a copy that sets the NAME=PRICE `assignments`."""
    if not assignments:
        return points
    copies, out = {}, {}
    for key, measured in points.items():
        model = key[0]
        if model not in copies:
            with open(model) as f:
                j = json.load(f)
            j.update({a.split("=")[0]: float(a.split("=")[1]) for a in assignments})
            copies[model] = os.path.join(tmp, "set." + os.path.basename(model))
            with open(copies[model], "w") as f:
                json.dump(j, f)
        out[(copies[model],) + key[1:]] = measured
    return out


def ranks_per_node_args(model_path):
    """--ranks-per-node for a model of an SMPI platform (cost_model_<platform>_p<P>...: the
    platform's cores per node, block placement as its hostfile), else nothing (one node)."""
    found = re.search(r"cost_model_(torus|fattree|dragonfly)_p\d+", os.path.basename(model_path))
    return ["--ranks-per-node", str(platforms.value(found.group(1), "cores_per_node"))] if found else []


def pick(cartplan, model_path, dims, stencil, op, m, cache):
    key = (model_path, dims, stencil, op, m)
    if key not in cache:
        args = [cartplan, "plan", "--op", "allgather" if op == "allgather" else "alltoall", "--stencil", stencil,
                "--dims", dims.replace("x", ","), "--cost-model", model_path, "--explain"]
        args += model_replay.block_args(stencil, op, m, cartplan) + ranks_per_node_args(model_path)
        out = subprocess.run(args, capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"term_evidence.py: {' '.join(args)}: {out.stderr.strip()}")
        cache[key] = re.search(r"^chosen: (.+)$", out.stdout, re.M).group(1)
    return cache[key]


def zeroed(model_path, members, tmp):
    with open(model_path) as f:
        j = json.load(f)
    new = {k.split("=")[0]: j.get(k.split("=")[1], 0.0) if "=" in k else 0.0 for k in members}
    if all(j.get(k, 0) == v for k, v in new.items()):
        return None  # the term already has that value in this calibration: nothing to compare
    j.update(new)
    path = os.path.join(tmp, os.path.basename(model_path) + "." + members[0].replace("=", "-") + ".json")
    with open(path, "w") as f:
        json.dump(j, f)
    return path


def judge(cartplan, points, term, tmp, cache, show):
    """One row of the table: how the picks with the term compare with those without it."""
    n = zero_in_model = changed = helps = hurts = ties = unmeasured = 0
    with_us = without_us = 0.0
    within = {"with": 0, "without": 0, "of": 0}  # auto within 5 % of the best measured candidate
    for (model, dims, stencil, op, m), measured in sorted(points.items()):
        n += 1
        variant = zeroed(model, TERMS[term], tmp)
        if variant is None:
            zero_in_model += 1
            continue
        full = pick(cartplan, model, dims, stencil, op, m, cache)
        zero = pick(cartplan, variant, dims, stencil, op, m, cache)
        if full in measured and zero in measured:
            best = min(measured.values())
            within["of"] += 1
            within["with"] += measured[full] <= 1.05 * best
            within["without"] += measured[zero] <= 1.05 * best
        if full == zero:
            continue
        changed += 1
        if full not in measured or zero not in measured:
            unmeasured += 1
            continue
        tf, tz = measured[full], measured[zero]
        with_us, without_us = with_us + tf, without_us + tz
        verdict = "helps" if tf < tz * (1 - NOISE) else "hurts" if tz < tf * (1 - NOISE) else "tie"
        helps, hurts, ties = helps + (verdict == "helps"), hurts + (verdict == "hurts"), ties + (verdict == "tie")
        if show:
            print(f"  {term} {os.path.basename(model)} {stencil} {dims} {op} m={m}: with {full} {tf:.2f} us, "
                  f"without {zero} {tz:.2f} us: {verdict}")
    return (f"| `{term}` | {n} | {zero_in_model} | {changed} | {helps} | {hurts} | {ties} | {unmeasured} | "
            f"{with_us:.1f} / {without_us:.1f} |",
            f"`{term}`: auto within 5 % of the best measured candidate with the term at {within['with']} of "
            f"{within['of']} points, without it at {within['without']} of {within['of']}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cartplan", required=True)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--terms", default=",".join(TERMS))
    ap.add_argument("--set", default="")
    ap.add_argument("--smpi-only", action="store_true")
    ap.add_argument("--smpi-models")
    a = ap.parse_args()
    cache = {}
    with tempfile.TemporaryDirectory() as tmp:
        points = {} if a.smpi_only else cpp_points(builtin_model(a.cartplan, tmp))
        points = with_prices({**points, **smpi_points(a.smpi_models)}, [x for x in a.set.split(",") if x], tmp)
        rows = [judge(a.cartplan, points, term, tmp, cache, a.list) for term in a.terms.split(",")]
    print("| term | points | term 0 (unchanged) in model | picks changed | helps | hurts | ties | unmeasured | "
          "us with / without (changed) |")
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(r[0] for r in rows))
    print()
    print("\n".join(r[1] for r in rows))


if __name__ == "__main__":
    main()
