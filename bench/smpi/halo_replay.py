#!/usr/bin/env python3
"""Replays the halo API's choice on measured tools/halo runs with another cost model, without MPI:
for every run file (bench/smpi/halo_sweep.sh's halo_<platform>_p<P>_d<D>_n<N>_k<K>.txt) it asks
`cartplan halo explain` (the run's interior, ghost width and process grid, 8-byte elements,
every region) which plan the model picks, and judges that pick by the run's measured time of the
halo API forced to that plan ("halo API direct", "halo API combining", "halo API dimwise")
against the best variant of the run (Cart_alltoallw's plans, the hand-written exchange and the
linear loop included). Simulated times do not depend on the model, so this is what a re-run with
the model would give, up to the run-to-run differences of back-to-back timing between variants
that send the same messages (the same-message spread column: the linear loop, Cart_alltoallw's
direct plan and the halo API's direct plan, which all send one message per neighbour).

    python3 bench/smpi/halo_replay.py --cartplan BIN [--model-dir DIR] [--suffix S] FILE...
        # the model of a file on platform PL: DIR/cost_model_PL_p256S.json (default DIR:
        # bench/results/smpi, S empty: the models the runs used)
Prints one markdown row per file (a dimwise pick with its dimension order; the runs' dimwise plans are
those of the models they ran with) and the last lines "within 5 % of the best variant at N of M runs" and
"slower than the linear loop by more than 5 % at N of M runs" (runs with a linear loop)."""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import halo_table  # noqa: E402
import platforms  # noqa: E402

TOLERANCE = 1.05
SAME_MESSAGES = ["linear Isend/Irecv", "cartplan direct", "halo API direct"]


def pick(cartplan, run, model):
    """The algorithm the halo API's auto picks under `model` for `run`."""
    d, n, k = run["d"], run["n"], run["k"]
    args = [cartplan, "halo", "explain", "--interior", ",".join([str(n)] * d), "--ghost", str(k), "--elem", "8",
            "--dims", run["grid"].replace("x", ","), "--cost-model", model, "--format", "json",
            "--ranks-per-node", str(platforms.value(run["platform"], "cores_per_node"))]
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"halo_replay.py: {' '.join(args)}: {out.stderr.strip()}")
    cands = json.loads(out.stdout)["candidates"]
    chosen = [c for c in cands if c["picked"]][0]
    order = f" [{','.join(str(k) for k in chosen['dim_order'])}]" if chosen["algorithm"] == "dimwise" else ""
    return chosen["algorithm"], chosen["predicted_us"], order


def spread(vs):
    times = [vs[name][1] for name in SAME_MESSAGES if name in vs]
    return max(times) / min(times) if times else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cartplan", required=True)
    ap.add_argument("--model-dir", default="bench/results/smpi")
    ap.add_argument("--suffix", default="")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    print("| platform | p | d | n | k | pick (predicted us) | pick measured | best variant | pick / best | pick / linear loop | "
          "same-message spread |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    within = total = slower = loops = 0
    for path in a.files:
        run = halo_table.parse(path)
        vs = run["variants"]
        if "d" not in run or "halo API direct" not in vs:
            continue
        model = os.path.join(a.model_dir, f"cost_model_{run['platform']}_p256{a.suffix}.json")
        algo, predicted, order = pick(a.cartplan, run, model)
        measured = vs[f"halo API {algo}"][1]
        best = min(vs, key=lambda name: vs[name][1])
        ratio = measured / vs[best][1]
        total += 1
        within += ratio <= TOLERANCE
        vs_loop = "-"
        if "linear Isend/Irecv" in vs:
            loops += 1
            to_loop = measured / vs["linear Isend/Irecv"][1]
            slower += to_loop > TOLERANCE
            vs_loop = f"{to_loop:.3f}{' **slower**' if to_loop > TOLERANCE else ''}"
        print(f"| {run['platform']} | {run['np']} | {run['d']} | {run['n']} | {run['k']} | {algo} ({predicted:.2f}){order} | "
              f"{measured:.2f} | {best} {vs[best][1]:.2f} | {ratio:.3f}{'' if ratio <= TOLERANCE else ' **miss**'} | "
              f"{vs_loop} | {spread(vs):.2f} |")
    print(f"\nwithin 5 % of the best variant at {within} of {total} runs")
    print(f"slower than the linear loop by more than 5 % at {slower} of {loops} runs")


if __name__ == "__main__":
    main()
