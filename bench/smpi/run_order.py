"""Which measured time of a tools/halo run judges a dimwise plan in a given dimension order (order-aware judging).

A run's "halo API dimwise" ran the dimension order the run's own model chose: the model its header names
(`# CARTPLAN_COST_MODEL=FILE ...`), asked through `cartplan halo explain --algo dimwise` with the platform's
ranks per node (as bench/results/smpi/small_messages/rank_judge.py does). Its "hand-written dimwise" runs the
natural order 0,1,(2). A dimwise plan in any other order was not run, so it is unjudged."""
import json
import re
import subprocess

import platforms

MODEL = re.compile(r"CARTPLAN_COST_MODEL=(\S+)")


def run_model(path):
    """The cost model the run at `path` ran with (its header's CARTPLAN_COST_MODEL), or None."""
    with open(path) as f:
        m = MODEL.search(f.readline())
    return m[1] if m else None


def run_dim_order(cartplan, run, model):
    """The dimension order `model` picks for dimwise at `run` (a tuple), as the run's library did."""
    args = [cartplan, "halo", "explain", "--interior", ",".join([str(run["n"])] * run["d"]), "--ghost", str(run["k"]),
            "--elem", "8", "--dims", run["grid"].replace("x", ","), "--cost-model", model, "--format", "json",
            "--ranks-per-node", str(platforms.value(run["platform"], "cores_per_node")), "--algo", "dimwise"]
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {out.stderr.strip()}")
    cands = json.loads(out.stdout)["candidates"]
    return tuple([c for c in cands if c["picked"]][0]["dim_order"])


def dimwise_time(cartplan, path, run, order):
    """(measured us, variant name) judging dimwise in `order` at the run at `path`, or (None, why) if not run."""
    vs = run["variants"]
    model = run_model(path)
    ran = run_dim_order(cartplan, run, model) if model else None
    if ran == tuple(order):
        return vs["halo API dimwise"][1], "halo API dimwise"
    if tuple(order) == tuple(range(run["d"])) and "hand-written dimwise" in vs:
        return vs["hand-written dimwise"][1], "hand-written dimwise"
    shown = "[" + ",".join(str(k) for k in order) + "]"
    return None, f"unjudged: order {shown} not run" if model else "unjudged: the run's model unknown"
