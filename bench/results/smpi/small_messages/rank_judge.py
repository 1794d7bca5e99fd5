#!/usr/bin/env python3
"""Offline judge of halo cost-model forms for small_messages.md (issues 30, 33), no simulation, no MPI.

For every tools/halo run file: each plan's program (`cartplan halo rank`, as bench/smpi/overlap_replay.py
reads it; dimwise in every dimension order), placed in blocks of the platform's cores per node, priced with the
nic_overlap calibrations (bench/results/smpi/nic_overlap/cost_model_<platform>_p256.json, phase_overlap 1 =
overlap_replay's 'max' form) two ways: 'mean' = on the mean rank's on/off-node shares (what the library does;
its picks and predictions reproduce `cartplan halo explain`), 'rank' = every rank's own on/off-node sides,
the busiest rank. auto's rule: dimwise's cheapest order (the first, natural order, on ties), then the cheapest
of direct, combining, dimwise. A dimwise pick is judged by the run's 'halo API dimwise' if its order is the one
the run's own model (the header's CARTPLAN_COST_MODEL) chose, by 'hand-written dimwise' if it is the natural
order (0,1,..), else it is unjudged (nan). Variants (environment):
  LO=1     on-node bytes at calibrate's ping-pong beta (the model file's pingpong.beta_us_per_byte, measured
           between two ranks of one node), off-node bytes at the fitted beta (off_node_beta = the difference)
  BLIND=1  judge every dimwise pick by the run's 'halo API dimwise' whatever its order (halo_replay.py's rule)
  FORM=floor every phase at least phase_us + alpha x its messages (a rank's one CPU pays every message's
           alpha; the overlap of on- and off-node sides hides wire time only)
  FORM=pipe  one-phase plans (direct) as a pipeline back to back: phase_us + max(alpha x messages, on-node
           wire, off-node wire + node link); plans of several phases as before

    python3 bench/results/smpi/small_messages/rank_judge.py bazel-bin/tools/cartplan FILE..."""
import itertools, json, os, re, subprocess, sys
sys.path.insert(0, "bench/smpi")
import overlap_replay as orp, halo_table, platforms

def prog(cartplan, run, algo, model, order=None):
    d, n, k = run["d"], run["n"], run["k"]
    args = [cartplan, "halo", "rank", "--interior", ",".join([str(n)] * d), "--ghost", str(k), "--elem", "8", "--dims",
            run["grid"].replace("x", ","), "--algo", algo, "--cost-model", model, "--rank", "0"]
    if order: args += ["--dim-order", ",".join(map(str, order))]
    out = subprocess.run(args, capture_output=True, text=True, check=True)
    phases = []
    for line in out.stdout.splitlines():
        if line.startswith("phase "): phases.append([])
        m = orp.SEND.match(line)
        if m and int(m[1]) != 0: phases[-1].append((int(m[1]), int(m[2]) * 8))
    return [p for p in phases if p]

def pipe_cost(p, agg, per_rank, links):
    """FORM=pipe: a one-phase plan back to back is a pipeline: max(alpha x all its messages (the CPU), on-node
    wire, off-node wire + node link) + phase_us; plans of several phases as the library prices them (max form)."""
    if len(links) != 1:
        return orp.cost(p, "max", agg, per_rank, links)
    q = dict(p); q["alpha_us"] = 0.0
    n = len(per_rank)
    k = sum(len(r[0][0]) + len(r[0][1]) for r in per_rank) / n if agg == "mean" else max(len(r[0][0]) + len(r[0][1]) for r in per_rank)
    wires = orp.cost(q, "max", agg, per_rank, links) - p["phase_us"]
    return p["phase_us"] + max(p["alpha_us"] * k, wires)


def floor_cost(p, agg, per_rank, links):
    """FORM=floor: each phase max(the library's max form, phase_us + alpha x the phase's messages)."""
    def phase(on, off, link):
        k = sum(w for _, w in on + off)
        return max(orp.phase_cost(p, "max", on, off, link), p["phase_us"] + p["alpha_us"] * k)
    if agg == "rank":
        return max(sum(phase([(b, 1) for b in on], [(b, 1) for b in off], links[f]) for f, (on, off) in enumerate(r))
                   for r in per_rank)
    total, n = 0.0, len(per_rank)
    for f in range(len(links)):
        on, off = {}, {}
        for r in per_rank:
            for b in r[f][0]: on[b] = on.get(b, 0) + 1 / n
            for b in r[f][1]: off[b] = off.get(b, 0) + 1 / n
        total += phase(list(on.items()), list(off.items()), links[f])
    return total


def price(p, agg, per_rank, links):
    form = os.environ.get("FORM")
    if form == "pipe": return pipe_cost(p, agg, per_rank, links)
    if form == "floor": return floor_cost(p, agg, per_rank, links)
    return orp.cost(p, "max", agg, per_rank, links)


def run_order(cartplan, run, model, rpn):
    args = [cartplan, "halo", "explain", "--interior", ",".join([str(run["n"])] * run["d"]), "--ghost", str(run["k"]),
            "--elem", "8", "--dims", run["grid"].replace("x", ","), "--cost-model", model, "--format", "json",
            "--ranks-per-node", str(rpn), "--algo", "dimwise"]
    c = json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)["candidates"]
    return tuple([x for x in c if x["picked"]][0]["dim_order"])

cartplan, files = sys.argv[1], sys.argv[2:]
tally = {"mean": [0, 0, 0], "rank": [0, 0, 0]}
for path in files:
    run = halo_table.parse(path)
    vs = run["variants"]
    if "d" not in run or "halo API direct" not in vs or "linear Isend/Irecv" not in vs: continue
    head = open(path).readline()
    m = re.search(r"CARTPLAN_COST_MODEL=(\S+)", head)
    run_model = m[1] if m else f"bench/results/smpi/cost_model_{run['platform']}_p{run['np']}.json"
    if not m and "HALO_MODEL" not in head: run_model = f"bench/results/smpi/cost_model_{run['platform']}_p256.json"
    model = f"bench/results/smpi/nic_overlap/cost_model_{run['platform']}_p256.json"
    p = json.load(open(model))
    if os.environ.get("LO"):  # on-node bytes at calibrate's ping-pong beta (measured on one node), off-node at the fitted beta
        p["off_node_beta_us_per_byte"] = p["beta_us_per_byte"] - p["pingpong"]["beta_us_per_byte"]
        p["beta_us_per_byte"] = p["pingpong"]["beta_us_per_byte"]
    rpn = platforms.value(run["platform"], "cores_per_node")
    dims = [int(x) for x in run["grid"].split("x")]
    ro = run_order(cartplan, run, run_model, rpn)
    cands = []
    for algo in ["direct", "combining"]:
        pl = orp.placed(prog(cartplan, run, algo, model), dims, rpn)
        cands.append((algo, None, price(p, "mean", *pl), price(p, "rank", *pl)))
    for order in itertools.permutations(range(run["d"])):
        pl = orp.placed(prog(cartplan, run, "dimwise", model, order), dims, rpn)
        cands.append(("dimwise", order, price(p, "mean", *pl), price(p, "rank", *pl)))
    best = min(v[1] for v in vs.values()); loop = vs["linear Isend/Irecv"][1]
    line = [f"{run['platform']} p{run['np']} d{run['d']} n{run['n']} k{run['k']} (run's order {ro})"]
    for agg, i in (("mean", 2), ("rank", 3)):
        # the library's rule: dimwise's cheapest order (first on ties), then the cheapest kind (direct first on ties)
        dw = min((c for c in cands if c[0] == "dimwise"), key=lambda c: c[i])
        pick = min([c for c in cands if c[0] != "dimwise"] + [dw], key=lambda c: c[i])
        if pick[0] != "dimwise": t = vs[f"halo API {pick[0]}"][1]
        elif pick[1] == ro or os.environ.get("BLIND"): t = vs["halo API dimwise"][1]
        elif pick[1] == tuple(range(run["d"])) and "hand-written dimwise" in vs: t = vs["hand-written dimwise"][1]
        else: t = float("nan")
        tally[agg][0] += t <= 1.05 * best; tally[agg][1] += t > 1.05 * loop; tally[agg][2] += t != t
        line.append(f"{agg}: {pick[0]}{'' if pick[1] is None else list(pick[1])} ({pick[i]:.2f}) {t:.2f} /best {t/best:.3f} /loop {t/loop:.3f}")
    print(" | ".join(line))
for agg, (w, s, u) in tally.items():
    print(f"{agg}: within 5 % {w}, slower than loop {s}, unjudged {u}")
