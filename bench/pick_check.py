#!/usr/bin/env python3
"""The optimizer's picks at the benchmark points, deterministically, for comparing two builds.

For every point of `bash bench/run.sh` (--quick and full), of `bash bench/scale.sh` and of the
SMPI first run, and for every cost-model file given (and the built-in model), asks `cartplan plan
--explain` which candidate auto picks, with the point's grid (MPI_Dims_create's for its np) and
block sizes, as the MPI backend prices a request. With --halo it also runs the main job's
configurations (bench/main_job.sh) under mpirun for one iteration and reads which plan auto chose
and every variant's prediction (no timing is read). Nothing here is timed: two builds that pick
alike print the same lines, whatever the machine's load.

  python3 bench/pick_check.py --cartplan BIN [--halo BIN] [--models FILE,..] > picks.txt
  diff picks_before.txt picks_after.txt

Each line: model, np, grid, stencil, op, m (ints per block), the pick, and with --predictions
the pick's predicted total."""
import argparse
import glob
import json
import os
import re
import subprocess
import sys

BOX3 = [f"box:d={d},n=3,f=-1" for d in (2, 3, 4, 5)]
DEEP = ["chebyshev:d=2,depth=4", "box:d=2,n=9,f=-4"]
RING = "offsets:1;2;3;-1;-2;-3"
# (np, grid or None for MPI_Dims_create, stencils, block sizes in ints, ops): run.sh --quick, run.sh
# (full), scale.sh and bench/smpi/first_run.sh (at p = 64 on its platforms' models).
POINTS = [
    (2, None, BOX3 + ["box:d=3,n=4,f=-1", "box:d=3,n=5,f=-1"] + DEEP, [1, 10, 100, 1000], ["alltoall", "allgather", "alltoallv"]),
    (2, None, [f"box:d={d},n={n},f=-1" for d in (2, 3, 4) for n in (4, 5)] + ["box:d=5,n=4,f=-1"], [1, 10, 100, 1000],
     ["alltoall", "allgather", "alltoallv"]),
    (4, None, BOX3[:3], [1, 10, 100, 1000], ["alltoall", "allgather", "alltoallv"]),
    (8, None, BOX3[:3], [1, 10, 100, 1000], ["alltoall", "allgather", "alltoallv"]),
    (2, None, BOX3[:3] + ["box:d=3,n=5,f=-1"], [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192],
     ["alltoall", "allgather"]),
    (8, [2, 2, 2], ["box:d=3,n=3,f=-1"], [1, 100], ["alltoall", "allgather"]),
    (8, [8], [RING], [1, 100], ["alltoall", "allgather"]),
    (8, [4, 2], ["box:d=2,n=3,f=-1", "chebyshev:d=2,depth=2"], [1, 100], ["alltoall", "allgather"]),
    (2, None, DEEP, [1, 100], ["alltoall", "allgather"]),
    (64, None, ["box:d=3,n=3,f=-1", "vonneumann:d=3,r=1"], [1, 10, 100, 1000], ["alltoall", "allgather", "alltoallv"]),
]
# bench/main_job.sh's configurations: np and halo arguments.
HALO_CONFIGS = [(4, []), (4, ["--periodic", "1", "--halo", "2"]), (2, ["--dims", "3", "--n", "16", "--periodic", "1"]),
                (6, ["--dims", "3", "--n", "16", "--periodic", "1"]),
                (8, ["--dims", "3", "--n", "16", "--periodic", "1", "--halo", "2"])]


def dims_create(np_, d):
    """MPI_Dims_create's grid: the most balanced non-increasing factorization of np_ into d."""
    best = None

    def search(n, k, chosen, largest):
        nonlocal best
        if k == 1:
            if n <= largest:
                grid = chosen + [n]
                if best is None or max(grid) - min(grid) < best[0]:
                    best = (max(grid) - min(grid), grid)
            return
        for f in range(largest, 0, -1):
            if n % f == 0:
                search(n // f, k - 1, chosen + [f], f)

    search(np_, d, [], np_)
    return best[1]


def offsets_of(cartplan, stencil):
    out = subprocess.run([cartplan, "plan", "--op", "alltoall", "--stencil", stencil, "--algo", "direct"],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)["neighborhood"]


def block_args(cartplan, stencil, op, m, cache):
    """--block-bytes of m ints; alltoallv: seed 000's m^(d-z) ints per block (exchange_bench)."""
    if op != "alltoallv":
        return ["--block-bytes", str(4 * m)]
    sizes = []
    for off in offsets_of_cached(cartplan, stencil, cache):
        z = sum(1 for x in off if x != 0)
        sizes.append(0 if z == 0 else 4 * m ** (len(off) - z))
    return ["--block-sizes", ",".join(map(str, sizes))]


def pick(cartplan, model, np_, grid, stencil, op, m, cache):
    d = len(grid) if grid else len(offsets_of_cached(cartplan, stencil, cache)[0])
    dims = grid or dims_create(np_, d)
    args = [cartplan, "plan", "--op", "alltoall" if op == "alltoallv" else op, "--stencil", stencil,
            "--dims", ",".join(map(str, dims)), "--explain"] + block_args(cartplan, stencil, op, m, cache)
    if model != "builtin":
        args += ["--cost-model", model]
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode != 0 and "out of range" in out.stderr:
        return dims, "(blocks too large for the CLI)", "-"  # exchange_bench skips them too
    if out.returncode != 0:
        sys.exit(f"pick_check.py: {' '.join(args)}: {out.stderr.strip()}")
    chosen = re.search(r"^chosen: (.+)$", out.stdout, re.M)
    total = re.search(r"^\* .*\| total ([0-9.]+) us$", out.stdout, re.M)
    return dims, chosen.group(1), total.group(1) if total else "?"


def offsets_of_cached(cartplan, stencil, cache):
    if stencil not in cache:
        cache[stencil] = offsets_of(cartplan, stencil)
    return cache[stencil]


def halo_picks(halo, model, np_, args):
    """auto's pick and every variant's prediction in one iteration of tools/halo."""
    env = dict(os.environ, OMPI_MCA_mpi_yield_when_idle="1")
    if model == "builtin":
        env.pop("CARTPLAN_COST_MODEL", None)
        env["XDG_CONFIG_HOME"] = "/nonexistent"  # no calibration found: the built-in model
    else:
        env["CARTPLAN_COST_MODEL"] = model
    cmd = ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", str(np_), halo, "--iters", "1"] + args
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"pick_check.py: {' '.join(cmd)}: {out.stderr.strip()[-2000:]}")
    chose = re.search(r"^auto chose: (.+)$", out.stdout, re.M).group(1)
    preds = []
    for line in out.stdout.splitlines():
        name = line[:24].strip()
        if name.startswith("cartplan ") and name != "cartplan auto blocking":
            preds.append(f"{name[9:]}={line[24:].split()[2]}")
    return chose, " ".join(preds)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cartplan", required=True)
    ap.add_argument("--halo")
    ap.add_argument("--models", help="comma-separated cost-model files (default: every committed one)")
    ap.add_argument("--predictions", action="store_true", help="also print the pick's predicted total")
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    models = a.models.split(",") if a.models else sorted(glob.glob(os.path.join(root, "bench/results/*/cost_model*.json")) +
                                                         glob.glob(os.path.join(root, "bench/results/*/main_job_cost_model*.json")))
    models = ["builtin"] + models
    cache = {}
    for model in models:
        name = os.path.relpath(model, root) if model != "builtin" else "builtin"
        smpi = "/smpi/" in model
        for np_, grid, stencils, ms, ops in POINTS:
            if (np_ == 64) != smpi and model != "builtin":
                continue  # SMPI models price the SMPI points; the machine's models the others
            for stencil in stencils:
                for op in ops:
                    for m in ms:
                        dims, chosen, total = pick(a.cartplan, model, np_, grid, stencil, op, m, cache)
                        extra = f"\t{total}" if a.predictions else ""
                        print(f"{name}\tnp={np_}\t{'x'.join(map(str, dims))}\t{stencil}\t{op}\tm={m}\t{chosen}{extra}", flush=True)
        if a.halo and not smpi:
            for np_, args in HALO_CONFIGS:
                m = re.search(r"_np(\d+)", name)
                if m and int(m.group(1)) != np_:
                    continue  # main_job.sh runs each np with its own calibration
                chose, preds = halo_picks(a.halo, model, np_, args)
                extra = f"\t{preds}" if a.predictions else ""
                print(f"{name}\thalo np={np_} {' '.join(args) or '(default)'}\t{chose}{extra}", flush=True)


if __name__ == "__main__":
    main()
