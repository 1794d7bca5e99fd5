#!/usr/bin/env python3
"""Offline judge of phase-cost forms on the committed main-job runs (no simulation, no MPI): for every
tools/halo run file it reads each halo plan's program (`cartplan halo rank --rank 0`: phases, peers, bytes;
grids are periodic, so every rank runs rank 0's program shifted), places the ranks in blocks of the
platform's cores per node (the committed runs' hostfiles), prices each plan under several forms of the
phase cost and price sets, and judges the cheapest of direct / combining / dimwise by the run's measured
time of the halo API forced to that plan, against the best variant of the run and the linear loop.

It re-prices the plans itself, in Python below (the forms, the mean rank's shares, the price sets), not with
the library's predictor (engine::predict, engine::halo::price_halo). Two checks tie it to the library: its
`committed | sum | mean` row reproduces the predictions the runs printed (largest relative difference 0.13 %,
printed first), and for the kept model (refit+lo, overlap 0.5) halo_replay.py --model-dir with the models
--write-models writes replays the library's own prediction (`cartplan halo explain`) and gives the same
picks (phase_overlap.md, last table). The other forms and price sets (max, max-cpu, rank, nic, ...) are
priced here only.

Forms (per rank r and phase f; on(r, f) / off(r, f): the sends whose peer is on r's node / another node;
msg(b) = alpha + beta b (+ rendezvous_us above the eager limit); link(f) = the busiest node's off-node bytes in
phase f, larger direction):
  sum      phase_us + sum_on msg + sum_off (msg + off_node_alpha + off_node_beta b) + node_link link(f)
           (the library's model; priced on the mean rank, as engine::halo::price_halo does on a torus)
  max      phase_us + max(sum_on msg, sum_off (...) + node_link link(f))   (on- and off-node concurrent)
  max-cpu  phase_us + alpha (messages) + max(on-node wire, off-node wire)   (per-message CPU serial, wires concurrent)
'mean': the forms on the mean rank's counts (shares, what predict() counts); 'rank': the busiest rank, exactly.

Price sets: committed (cost_model_<pl>_p256.json: no placement prices), nic (committed, with the node link
at 1 / the platform's cited NIC or host-link bandwidth, as in placement.md), refit (placement/cost_model_<pl>_p256.json:
the placement re-fit), refit+lo (refit with on-node bytes at the platform's loopback bandwidth, off-node bytes
at the same total price).

    python3 bench/smpi/overlap_replay.py --cartplan BIN [--list] FILE...
    python3 bench/smpi/overlap_replay.py --write-models DIR --prices SET [--overlap X]
        # DIR/cost_model_<platform>_p256.json for every platform: the price set SET with phase_overlap X
        # (default 1), for halo_replay.py --model-dir DIR (the library's own prediction)
Prints one row per (prices, form, aggregation): auto within 5 % of the best variant, slower than the loop by
more than 5 %, points whose pick runs more than 1 % slower than the library's pick (committed, sum); --list adds
every point's picks."""
import argparse
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import halo_table  # noqa: E402
import platforms  # noqa: E402

ALGOS = ["direct", "combining", "dimwise"]
SEND = re.compile(r"^\s+send to\s+(\d+) tag \S+, (\d+) cells:")
TOL = 1.05


def program(cartplan, run, algo, model):
    """Rank 0's program of the halo plan `algo`: per phase, a list of (peer rank, bytes)."""
    d, n, k = run["d"], run["n"], run["k"]
    args = [cartplan, "halo", "rank", "--interior", ",".join([str(n)] * d), "--ghost", str(k), "--elem", "8", "--dims",
            run["grid"].replace("x", ","), "--algo", algo, "--cost-model", model, "--rank", "0"]
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"overlap_replay.py: {' '.join(args)}: {out.stderr.strip()}")
    phases = []
    for line in out.stdout.splitlines():
        if line.startswith("phase "):
            phases.append([])
        m = SEND.match(line)
        if m and int(m[1]) != 0:
            phases[-1].append((int(m[1]), int(m[2]) * 8))
    return [p for p in phases if p]


def coords(rank, dims):
    out = []
    for n in reversed(dims):
        out.append(rank % n)
        rank //= n
    return out[::-1]


def rank_of(c, dims):
    r = 0
    for x, n in zip(c, dims):
        r = r * n + x % n
    return r


def placed(phases, dims, rpn):
    """Per rank, per phase: (on-node byte list, off-node byte list); per phase the busiest node link's bytes."""
    shifts = [[(coords(peer, dims), b) for peer, b in ph] for ph in phases]
    size = 1
    for n in dims:
        size *= n
    per_rank, links = [], []
    for f, ph in enumerate(shifts):
        out = [0] * ((size + rpn - 1) // rpn)
        for r in range(size):
            if f == 0:
                per_rank.append([])
            c = coords(r, dims)
            on, off = [], []
            for s, b in ph:
                peer = rank_of([x + y for x, y in zip(c, s)], dims)
                (on if peer // rpn == r // rpn else off).append(b)
                if peer // rpn != r // rpn:
                    out[r // rpn] += b
            per_rank[r].append((on, off))
        links.append(max(out))  # periodic blocks: what leaves a node equals what enters one
    return per_rank, links


def msg(p, b):
    return p["alpha_us"] + p["beta_us_per_byte"] * b + (p.get("rendezvous_us", 0) if b > p["eager_limit_bytes"] else 0)


def phase_cost(p, form, on, off, link, share=1.0):
    """One phase of one rank (or of the mean rank: on/off weighted by `share` lists)."""
    off_extra = sum(w * (p.get("off_node_alpha_us", 0) + p.get("off_node_beta_us_per_byte", 0) * b) for b, w in off)
    node = p.get("node_link_us_per_byte", 0) * link
    c_on = sum(w * msg(p, b) for b, w in on)
    c_off = sum(w * msg(p, b) for b, w in off) + off_extra + node
    if form == "sum":
        return p["phase_us"] + c_on + c_off
    if form == "max":
        return p["phase_us"] + max(c_on, c_off)
    if form.startswith("overlap "):  # the library's phase_overlap x: the sum less x times the cheaper side
        return p["phase_us"] + c_on + c_off - float(form.split()[1]) * min(c_on, c_off)
    cpu = p["alpha_us"] * sum(w for _, w in on + off)  # max-cpu: the per-message part serial, the wires concurrent
    return p["phase_us"] + cpu + max(c_on - p["alpha_us"] * sum(w for _, w in on),
                                     c_off - p["alpha_us"] * sum(w for _, w in off))


def cost(p, form, agg, per_rank, links):
    if agg == "rank":
        return max(sum(phase_cost(p, form, [(b, 1) for b in on], [(b, 1) for b in off], links[f])
                       for f, (on, off) in enumerate(r)) for r in per_rank)
    total, n = 0.0, len(per_rank)
    for f in range(len(links)):  # the mean rank: each byte size with the share of ranks that send it on / off the node
        on, off = {}, {}
        for r in per_rank:
            for b in r[f][0]:
                on[b] = on.get(b, 0) + 1 / n
            for b in r[f][1]:
                off[b] = off.get(b, 0) + 1 / n
        total += phase_cost(p, form, list(on.items()), list(off.items()), links[f])
    return total


def price_sets(platform, model_dir):
    committed = json.load(open(os.path.join(model_dir, f"cost_model_{platform}_p256.json")))
    refit = json.load(open(os.path.join(model_dir, "placement", f"cost_model_{platform}_p256.json")))
    lo = dict(refit)
    beta_lo = 1 / (platforms.value(platform, "loopback_bw") / 1e6)  # us per byte
    lo["off_node_beta_us_per_byte"] = refit["beta_us_per_byte"] + refit["off_node_beta_us_per_byte"] - beta_lo
    lo["beta_us_per_byte"] = beta_lo
    nic = dict(committed)  # placement.md's "nic": the node's link at the platform's cited bandwidth
    nic["node_link_us_per_byte"] = 1 / (platforms.value(platform, "nic_bw" if platform == "torus" else "link_bw") / 1e6)
    return {"committed": committed, "nic": nic, "refit": refit, "refit+lo": lo}


def judge(run, algo):
    """(measured us of the halo API forced to `algo`, best variant's us, linear loop's us)."""
    vs = run["variants"]
    return vs[f"halo API {algo}"][1], min(v[1] for v in vs.values()), vs["linear Isend/Irecv"][1]


def points(cartplan, files, model_dir):
    """Per run: the run, its platform's price sets and per algorithm (per_rank, links)."""
    out = []
    for path in files:
        run = halo_table.parse(path)
        vs = run["variants"]
        if "d" not in run or "halo API direct" not in vs or "linear Isend/Irecv" not in vs:
            continue
        model = os.path.join(model_dir, f"cost_model_{run['platform']}_p256.json")
        rpn = platforms.value(run["platform"], "cores_per_node")
        dims = [int(x) for x in run["grid"].split("x")]
        plans = {a: placed(program(cartplan, run, a, model), dims, rpn) for a in ALGOS}
        out.append((run, price_sets(run["platform"], model_dir), plans))
    return out


def evaluate(pts, prices, form, agg):
    """Per point: (pick, predictions per algorithm, measured pick, best, loop)."""
    rows = []
    for run, sets, plans in pts:
        pred = {a: cost(sets[prices], form, agg, *plans[a]) for a in ALGOS}
        pick = min(ALGOS, key=lambda a: (pred[a], ALGOS.index(a)))
        rows.append((run, pick, pred) + judge(run, pick))
    return rows


def write_models(a):
    os.makedirs(a.write_models, exist_ok=True)
    for platform in platforms.PARAMS:
        m = dict(price_sets(platform, a.model_dir)[a.prices])
        m["phase_overlap"] = a.overlap
        for stale in ["r2", "worst_relative_error", "points", "choices_within_10_percent"]:  # the fit's, not these prices'
            m.pop(stale, None)
        m["method"] = (f"bench/smpi/overlap_replay.py --write-models --prices {a.prices} --overlap {a.overlap}: "
                       + m.get("method", ""))
        with open(os.path.join(a.write_models, f"cost_model_{platform}_p256.json"), "w") as f:
            json.dump(m, f, indent=2)
            f.write("\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cartplan")
    ap.add_argument("--model-dir", default="bench/results/smpi")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--fractions", type=lambda t: [float(x) for x in t.split(",")], default=[],
                    help="also the form 'overlap X' (phase_overlap X, on the mean rank) for each X of a list 0.25,0.5")
    ap.add_argument("--write-models")
    ap.add_argument("--prices", default="refit+lo")
    ap.add_argument("--overlap", type=float, default=1.0)
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    if a.write_models:
        return write_models(a)
    if not a.cartplan or not a.files:
        ap.error("--cartplan and files are required")
    pts = points(a.cartplan, a.files, a.model_dir)
    base = evaluate(pts, "committed", "sum", "mean")
    check = max(abs(pred[run["variants"][f"halo API {al}"][0]] - run["variants"][f"halo API {al}"][2]) /
                run["variants"][f"halo API {al}"][2] for run, _, pred, *_ in base for al in ALGOS)
    print(f"{len(pts)} points; committed/sum/mean against the runs' printed predictions: largest relative difference {check:.4f}")
    print()
    print("| prices | form | ranks | auto within 5 % of the best | slower than the loop by > 5 % | worse than the library's pick (> 1 %) | better (> 1 %) |")
    print("|---|---|---|---|---|---|---|")
    for prices in ["committed", "nic", "refit", "refit+lo"]:
        for form in ["sum", "max", "max-cpu"] + [f"overlap {x}" for x in a.fractions]:
            for agg in ["mean", "rank"] if form in ["sum", "max", "max-cpu"] else ["mean"]:
                rows = evaluate(pts, prices, form, agg)
                within = sum(m <= TOL * best for _, _, _, m, best, _ in rows)
                slower = sum(m > TOL * loop for _, _, _, m, best, loop in rows)
                worse = sum(r[3] > 1.01 * b[3] for r, b in zip(rows, base))
                better = sum(r[3] < b[3] / 1.01 for r, b in zip(rows, base))
                print(f"| {prices} | {form} | {agg} | {within} of {len(rows)} | {slower} | {worse} | {better} |")
                if a.list and (worse or better):
                    for r, b in zip(rows, base):
                        if r[1] != b[1]:
                            run = r[0]
                            print(f"|  | {run['platform']} p{run['np']} d{run['d']} n{run['n']} k{run['k']} | {b[1]} {b[3]:.2f} -> {r[1]} {r[3]:.2f} "
                                  f"| best {r[4]:.2f} loop {r[5]:.2f} | " + " ".join(f"{x} {y:.2f}" for x, y in r[2].items()) + " | | |")


if __name__ == "__main__":
    main()
