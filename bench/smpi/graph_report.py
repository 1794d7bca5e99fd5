#!/usr/bin/env python3
"""Tables and a plot of the graph-collective sweeps under SMPI (issue 32), from the raw file that
bench/smpi/graph_sweep.sh appends to: per point (platform, graph, op, block size) the simulated
time per call of linear (the baseline), pairing (seed 003), cumulative and auto, their set-up and
break-even, the cost model's predictions for the same point (`cartplan graph explain` with the
model the run used), the simulation's wall time and the command. Writes graph_sweep.md,
graph_sweep.dat and graph_sweep.png (gnuplot) next to the raw file.

    python3 bench/smpi/graph_report.py bench/results/smpi/graph_raw.txt [--cartplan PATH]
"""
import argparse
import json
import os
import re
import subprocess

SECTION = re.compile(r"^## (?P<command>.*?)  \(platform (?P<platform>\w+), np (?P<np>\d+); (?P<wall>\d+) s wall; (?P<verdict>.*)\)$")
POINT = re.compile(r"^# graph (?P<graph>\S+), (?P<op>\w+), (?P<bytes>\d+)-byte blocks.*?, np (?P<np>\d+), (?P<edges>\d+) edges, "
                   r"max out-degree (?P<deg>\d+), theta (?P<theta>\d+)")


def parse(text):
    """Points: dicts with the section's command, platform, wall, verdict and the variants' rows."""
    points, section, point = [], None, None
    for line in text.splitlines():
        m = SECTION.match(line)
        if m:
            section = m.groupdict()
            continue
        m = POINT.match(line)
        if m and section:
            point = dict(section, **m.groupdict(), variants={})
            points.append(point)
            continue
        if point is not None and line.startswith("| ") and not line.startswith("| variant"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if len(cells) in (11, 12):  # 12: with the sync column (graph_scale_bench since the sync measure)
                name, ran, median, _, _, _, create, setup, init, even, wrong = cells[:11]
                point["variants"][name] = {"ran": ran, "median": float(median), "setup": float(setup), "init": float(init),
                                           "create": float(create), "even": even, "wrong": int(wrong),
                                           "sync": float(cells[11]) if len(cells) == 12 else None}
    return [p for p in points if "linear" in p["variants"]]


def model_of(command):
    m = re.search(r"--model (\S+)", command)
    return m.group(1) if m else "builtin"


def predict(cartplan, graph, op, nbytes, model, cache):
    """The model's max-over-ranks time per candidate and auto's pick (alltoallv priced as alltoall
    with every block at the mean size)."""
    key = f"{graph}|{op}|{nbytes}|{model}"
    if key not in cache:
        cmd = [cartplan, "graph", "explain", "--graph", graph, "--op", "alltoall" if op == "alltoallv" else op,
               "--block-bytes", str(nbytes), "--construction", "sequential", "--format", "json"]
        if model != "builtin":
            cmd += ["--cost-model", model]
        j = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        cache[key] = {c["algorithm"]: c["max_rank_us"] for c in j["candidates"]}
        cache[key]["picked"] = next(c["algorithm"] for c in j["candidates"] if c["picked"])
    return cache[key]


def ratio(v, lin):
    return v["median"] / lin


def best_combining(p):
    lin = p["variants"]["linear"]["median"]
    cands = [(p["variants"][n]["median"], n) for n in ("pairing", "cumulative") if n in p["variants"]]
    t, name = min(cands)
    return name, t / lin


def row(p, pred):
    vs, lin = p["variants"], p["variants"]["linear"]["median"]
    cell = lambda n: f"{vs[n]['median']:.1f} ({ratio(vs[n], lin):.2f})" if n in vs else "-"
    auto = vs.get("auto", {})
    plin = pred["linear"]
    model = (f"{pred['picked']}; {plin:.1f} / {pred['pairing']:.1f} ({pred['pairing'] / plin:.2f}) / "
             f"{pred['cumulative']:.1f} ({pred['cumulative'] / plin:.2f})")
    setups = " / ".join(f"{vs[n]['setup'] / 1000:.2f}" for n in ("pairing", "cumulative", "auto") if n in vs)
    evens = " / ".join(vs[n]["even"] for n in ("pairing", "cumulative", "auto") if n in vs)
    wrong = sum(v["wrong"] for v in vs.values())
    return (f"| {p['platform']} | `{p['graph']}` | {p['np']} | {p['op']} | {p['bytes']} | {lin:.1f} | {cell('pairing')} | "
            f"{cell('cumulative')} | {auto.get('ran', '-')} {cell('auto')} | {setups} | {evens} | {model} | {wrong} | {p['wall']} |")


HEADER = """# Graph collectives under SimGrid's SMPI (issue 32): simulated, not measured on hardware

Persistent `Cart_graph_neighbor_allgather`, `_alltoall` and `_alltoallv` on communicators from
`Cart_graph_comm_create_adjacent` (SMPI has no `MPI_Dist_graph_create_adjacent`), every rank's
received bytes checked before timing (column "wrong": wrong bytes over all ranks). Linear is the
baseline: the one-message-per-edge `Isend`/`Irecv` loop Open MPI and MPICH run (SMPI has no
`MPI_Neighbor_*`). Times are the slowest rank's simulated microseconds per call (median of the
measured repetitions; simulated time is deterministic). Ratio = variant / linear. auto: what it
ran, and its time. Set-up: the variant's first persistent init on a fresh communicator
(pattern construction by messages; auto builds both patterns and agrees on a price table), in
simulated milliseconds: SMPI charges the messages, not the CPU time of the construction
(`smpi/simulate-computation` off). Break-even = set-up / (linear - variant) calls ("never": not
faster; "-": auto ran linear). Model: `cartplan graph explain` with the cost model the run used
(the platform's calibration at p = 256, also used at p = 1024): auto's pick; predicted linear /
pairing (ratio) / cumulative (ratio) in us (alltoallv priced as alltoall at the mean block size).
alltoallv blocks vary per edge in [b/2, 3b/2] bytes. Wall: seconds of wall time of the whole
simulation (all ops and sizes of that graph), on a shared 2-core machine.

Made by `python3 bench/smpi/graph_report.py bench/results/smpi/graph_raw.txt`; raw output, with
the command of every simulation, in graph_raw.txt; wall times in graph_raw_wall.log.

"""

COLUMNS = ("| platform | graph | p | op | B | linear us | pairing us (ratio) | cumulative us (ratio) | auto ran, us (ratio) | "
           "set-up ms pairing / cumulative / auto | break-even calls pairing / cumulative / auto | model: pick; linear / pairing / cumulative us | wrong | wall s |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")


def targets(points):
    """Issue 32's targets, counted over the points."""
    lines = ["## Against issue 32's targets", ""]
    autos = [(p, p["variants"]["auto"]) for p in points if "auto" in p["variants"]]
    worst = max(autos, key=lambda pa: ratio(pa[1], p_lin(pa[0])), default=None)
    slow = [p for p, a in autos if ratio(a, p_lin(p)) > 1.05]
    lines.append(f"* Never more than 5 % slower than linear (auto): {len(autos) - len(slow)} of {len(autos)} points hold; worst auto / linear "
                 f"{ratio(worst[1], p_lin(worst[0])):.3f} ({worst[0]['platform']}, {worst[0]['graph']}, {worst[0]['op']} {worst[0]['bytes']} B)."
                 if worst else "* No auto runs.")
    ag = [p for p in points if p["op"] == "allgather" and p["bytes"] == "4"]
    for p in ag:
        name, r = best_combining(p)
        auto = f"auto {ratio(p['variants']['auto'], p_lin(p)):.2f}x" if "auto" in p["variants"] else "auto not run"
        lines.append(f"* allgather 4 B, {p['platform']}, p = {p['np']}, `{p['graph']}`: best combining {name} {r:.2f}x linear "
                     f"({'meets' if r <= 0.5 else 'misses'} the 0.5x target); {auto}.")
    for p in (p for p in points if p["op"] == "alltoallv"):
        name, r = best_combining(p)
        lines.append(f"* alltoallv {p['bytes']} B, {p['platform']}, p = {p['np']}, `{p['graph']}`: linear / best ({name}) = {1 / r:.2f} "
                     f"({'meets' if 1 / r >= 1.3 else 'misses'} the 1.3x target).")
    return "\n".join(lines) + "\n"


def p_lin(p):
    return p["variants"]["linear"]["median"]


def write_dat_png(points, out_dir):
    dat = os.path.join(out_dir, "graph_sweep.dat")
    with open(dat, "w") as f:
        f.write("# x platform op bytes p graph auto/linear pairing/linear cumulative/linear\n")
        for i, p in enumerate(points):
            vs, lin = p["variants"], p_lin(p)
            r = [f"{vs[n]['median'] / lin:.4f}" if n in vs else "nan" for n in ("auto", "pairing", "cumulative")]
            f.write(f"{i} {p['platform']} {p['op']} {p['bytes']} {p['np']} {p['graph']} {' '.join(r)}\n")
    png = os.path.join(out_dir, "graph_sweep.png")
    labels = ", ".join(f'"{p["graph"].split(",seed")[0]} {p["op"]} {p["bytes"]}B" {i}' for i, p in enumerate(points))
    script = f"""set terminal pngcairo size 1600,700
set output "{png}"
set title "SMPI graph collectives: simulated time / linear loop (dashed: 1.05 and 0.5)"
set xtics ({labels}) rotate by -60 font ",7"
set xrange [-0.5:{len(points) - 0.5}]
set ylabel "time / linear"
set logscale y
set yrange [0.25:4]
set key top left
plot 1.05 with lines dt 2 lc rgb "gray" notitle, 0.5 with lines dt 2 lc rgb "gray" notitle, \\
  for [pl in "fattree torus dragonfly"] "{dat}" using 1:(strcol(2) eq pl ? $7 : 1/0) with points pt 7 ps 1.2 title "auto, ".pl, \\
  for [pl in "fattree torus dragonfly"] "{dat}" using 1:(strcol(2) eq pl ? $8 : 1/0) with points pt 4 title "pairing, ".pl, \\
  for [pl in "fattree torus dragonfly"] "{dat}" using 1:(strcol(2) eq pl ? $9 : 1/0) with points pt 8 title "cumulative, ".pl
"""
    subprocess.run(["gnuplot"], input=script, text=True, check=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("raw")
    ap.add_argument("--cartplan", default="bazel-bin/tools/cartplan")
    a = ap.parse_args()
    with open(a.raw) as f:
        points = parse(f.read())
    out_dir = os.path.dirname(a.raw) or "."
    cache_path = os.path.join(out_dir, "graph_model_cache.json")
    cache = json.load(open(cache_path)) if os.path.exists(cache_path) else {}
    points.sort(key=lambda p: (int(p["np"]) > 600, int(p["np"]) > 2000, p["graph"], p["platform"], p["op"], int(p["bytes"])))
    lines = [HEADER]
    nominal = lambda p: min((256, 1024, 4096), key=lambda n: abs(n - int(p["np"])))  # Moore graphs with holes have fewer ranks
    for np_ in sorted({nominal(p) for p in points}):
        lines += [f"## p = {np_} (column p: the graph's ranks)", "", COLUMNS]
        lines += [row(p, predict(a.cartplan, p["graph"], p["op"], p["bytes"], model_of(p["command"]), cache)) for p in points if nominal(p) == np_]
        lines.append("")
    lines.append("Commands (one simulation each, all its rows):\n")
    for c, verdict, wall in dict.fromkeys((p["command"], p["verdict"], p["wall"]) for p in points):
        lines.append(f"* `{c}` ({wall} s wall; {verdict if verdict == 'ok' else verdict + ': stopped, only the points it finished are above'})")
    lines += ["", targets(points)]
    with open(os.path.join(out_dir, "graph_sweep.md"), "w") as f:
        f.write("\n".join(lines))
    with open(cache_path, "w") as f:
        json.dump(cache, f, indent=1, sort_keys=True)
    write_dat_png(points, out_dir)
    print(os.path.join(out_dir, "graph_sweep.md"))


if __name__ == "__main__":
    main()
