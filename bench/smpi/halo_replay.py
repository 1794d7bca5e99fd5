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
A dimwise pick is judged order-aware (run_order.py): by the run's "halo API dimwise" if its dimension order is
the one the run's own model (the header's CARTPLAN_COST_MODEL) chose, by "hand-written dimwise" if it is the
natural order 0,1,(2), else it is unjudged (that order was not run) and left out of the within / slower counts.

    python3 bench/smpi/halo_replay.py --cartplan BIN [--model-dir DIR] [--suffix S] FILE...
        # the model of a file on platform PL: DIR/cost_model_PL_p256S.json (default DIR:
        # bench/results/smpi, S empty: the models the runs used)
Prints one markdown row per file (a dimwise pick with its dimension order, and "(hand-written dimwise)" after
its time if judged by that) and the last lines "unjudged (dimension order not run) at N of M runs",
"within 5 % of the best variant at N of M judged runs" and "slower than the linear loop by more than 5 % at
N of M judged runs" (judged runs with a linear loop; the slower line stays last)."""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import halo_table  # noqa: E402
import platforms  # noqa: E402
import run_order  # noqa: E402

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
    order = tuple(chosen["dim_order"]) if chosen["algorithm"] == "dimwise" else None
    return chosen["algorithm"], chosen["predicted_us"], order


def spread(vs):
    times = [vs[name][1] for name in SAME_MESSAGES if name in vs]
    return max(times) / min(times) if times else float("nan")


def measured(cartplan, path, run, algo, order):
    """(us or None, note): the run's time of the pick; dimwise order-aware (run_order.py)."""
    if algo != "dimwise":
        return run["variants"][f"halo API {algo}"][1], ""
    try:
        t, name = run_order.dimwise_time(cartplan, path, run, order)
    except RuntimeError as e:
        sys.exit(f"halo_replay.py: {e}")
    if t is None:
        return None, name
    return t, " (hand-written dimwise)" if name == "hand-written dimwise" else ""


def row(cartplan, path, run, model, tally):
    """One markdown row for the run at `path`; counts it in `tally` [within, judged, slower, loops, unjudged, total]."""
    vs = run["variants"]
    algo, predicted, order = pick(cartplan, run, model)
    shown = f" [{','.join(str(k) for k in order)}]" if order else ""
    best = min(vs, key=lambda name: vs[name][1])
    t, note = measured(cartplan, path, run, algo, order)
    tally[5] += 1
    head = f"| {run['platform']} | {run['np']} | {run['d']} | {run['n']} | {run['k']} | {algo} ({predicted:.2f}){shown} | "
    if t is None:
        tally[4] += 1
        return head + f"{note} | {best} {vs[best][1]:.2f} | - | - | {spread(vs):.2f} |"
    ratio = t / vs[best][1]
    tally[1] += 1
    tally[0] += ratio <= TOLERANCE
    vs_loop = "-"
    if "linear Isend/Irecv" in vs:
        tally[3] += 1
        to_loop = t / vs["linear Isend/Irecv"][1]
        tally[2] += to_loop > TOLERANCE
        vs_loop = f"{to_loop:.3f}{' **slower**' if to_loop > TOLERANCE else ''}"
    return head + (f"{t:.2f}{note} | {best} {vs[best][1]:.2f} | {ratio:.3f}{'' if ratio <= TOLERANCE else ' **miss**'} | "
                   f"{vs_loop} | {spread(vs):.2f} |")


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
    tally = [0] * 6
    for path in a.files:
        run = halo_table.parse(path)
        if "d" not in run or "halo API direct" not in run["variants"]:
            continue
        model = os.path.join(a.model_dir, f"cost_model_{run['platform']}_p256{a.suffix}.json")
        print(row(a.cartplan, path, run, model, tally))
    within, judged, slower, loops, unjudged, total = tally
    print(f"\nunjudged (dimension order not run) at {unjudged} of {total} runs")
    print(f"within 5 % of the best variant at {within} of {judged} judged runs")
    print(f"slower than the linear loop by more than 5 % at {slower} of {loops} judged runs")


if __name__ == "__main__":
    main()
