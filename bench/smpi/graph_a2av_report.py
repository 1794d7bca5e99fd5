#!/usr/bin/env python3
"""The alltoallv block-size sweep of issue 32 tabulated: per point (platform, graph, block size) each
variant's simulated time against the linear loop, in each measure the raw files hold (sync: one
call after a barrier; b2b: each rank's `--iters` back-to-back calls; per call, derived from a
3-call and a 30-call run of the same point: c = (30 b30 - 3 b3) / 27, which removes the barrier's
exit skew), beside the cost model's prediction for the same candidate (`cartplan graph explain
--op alltoall` at the mean block size, every grid of 2, 3 and 4 dimensions, with the model the
run used), and issue 32's two alltoallv targets counted: linear / auto >= 1.3, and auto never
more than 5 % slower than linear.

    python3 bench/smpi/graph_a2av_report.py bench/results/smpi/graph_a2av_raw.txt [more raw files]
        [--out bench/results/smpi/graph_a2av_tables.md] [--cartplan bazel-bin/tools/cartplan]
"""
import argparse
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from graph_report import model_of, parse  # noqa: E402  (same directory)

VARIANTS = ("pairing", "cumulative", "grid", "grid3", "grid4")
NAMES = {"grid": "grid 2-D", "grid3": "grid 3-D", "grid4": "grid 4-D"}


def iters_of(command):
    m = re.search(r"--iters (\d+)", command)
    return int(m.group(1)) if m else 3


def predict(cartplan, graph, nbytes, model, cache):
    """The model's max-over-ranks us per variant name (grids by their number of dimensions) and its pick."""
    key = f"{graph}|alltoall|{nbytes}|{model}|2,3,4"
    if key not in cache:
        cmd = [cartplan, "graph", "explain", "--graph", graph, "--op", "alltoall", "--block-bytes", str(nbytes),
               "--construction", "sequential", "--grid-dims", "2,3,4", "--format", "json"]
        if model != "builtin":
            cmd += ["--cost-model", model]
        j = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        out = {}
        for c in j["candidates"]:
            name = c["algorithm"]
            if name == "grid":
                name = {2: "grid", 3: "grid3", 4: "grid4"}.get(len(c["dims"]), f"grid{len(c['dims'])}")
            out[name] = c["max_rank_us"]
            if c["picked"]:
                out["picked"] = name
        cache[key] = out
    return cache[key]


def measures(points):
    """{(platform, graph, np, bytes): {measure: {variant: (us, ran)}}}, measures sync, b2b N and derived."""
    out = {}
    for p in points:
        if p["op"] != "alltoallv":
            continue
        key = (p["platform"], p["graph"], p["np"], int(p["bytes"]))
        n = iters_of(p["command"])
        slot = out.setdefault(key, {"model": model_of(p["command"]), "commands": set(), "wall": []})
        slot["commands"].add(p["command"])
        for name, v in p["variants"].items():
            if v["wrong"] != 0:
                raise SystemExit(f"{key} {name}: {v['wrong']} wrong bytes")
            slot.setdefault(f"b2b {n} calls", {})[name] = (v["median"], v["ran"])
            if v["sync"] is not None:
                slot.setdefault("sync", {})[name] = (v["sync"], v["ran"])
    for slot in out.values():
        b3, b30 = slot.get("b2b 3 calls", {}), slot.get("b2b 30 calls", {})
        both = {n: ((30 * b30[n][0] - 3 * b3[n][0]) / 27, b30[n][1]) for n in b30 if n in b3}
        if "linear" in both:
            slot["per call (derived)"] = both
    return out


def cell(times, name, lin, pred):
    if name not in times:
        return "-"
    model = f" [{pred[name] / pred['linear']:.2f}]" if name in pred and pred.get("linear") else ""
    return f"{times[name][0]:.2f} ({times[name][0] / lin:.2f}){model}"


def table(rows, measure, cartplan, cache):
    head = ("| platform | p | B (mean) | linear us [model us] | " + " | ".join(f"{NAMES.get(v, v)} us (ratio) [model]" for v in VARIANTS) +
            " | auto ran: us (ratio) | model's pick | linear / auto | linear / best | 1.3x by auto | auto <= 1.05 linear |")
    lines = [f"### {measure}", "", head, "|" + "---|" * (head.count("|") - 1)]
    verdicts = []
    for key, slot in rows:
        times = slot.get(measure)
        if not times or "linear" not in times:
            continue
        platform, graph, np_, nbytes = key
        pred = predict(cartplan, graph, nbytes, slot["model"], cache)
        lin = times["linear"][0]
        cells = [cell(times, v, lin, pred) for v in VARIANTS]
        auto = times.get("auto")
        best_name = min((n for n in times if n != "linear"), key=lambda n: times[n][0], default=None)
        best = lin / times[best_name][0] if best_name else float("nan")
        auto_cell, gain, meets, holds = "-", "-", "-", "-"
        if auto:
            gain_v = lin / auto[0]
            auto_cell, gain = f"{auto[1]}: {auto[0]:.2f} ({auto[0] / lin:.2f})", f"{gain_v:.2f}"
            meets, holds = ("yes" if gain_v >= 1.3 else "no"), ("yes" if auto[0] <= 1.05 * lin else "**no**")
            verdicts.append((key, gain_v, auto[0] / lin, best_name, best))
        lines.append(f"| {platform} | {np_} | {nbytes} | {lin:.2f} [{pred['linear']:.2f}] | " + " | ".join(cells) +
                     f" | {auto_cell} | {pred.get('picked', '?')} | {gain} | {best:.2f} ({NAMES.get(best_name, best_name)}) | {meets} | {holds} |")
    return lines, verdicts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("raw", nargs="+")
    ap.add_argument("--out", default="bench/results/smpi/graph_a2av_tables.md")
    ap.add_argument("--cartplan", default="bazel-bin/tools/cartplan")
    a = ap.parse_args()
    points = []
    for path in a.raw:
        with open(path) as f:
            points += parse(f.read())
    rows = sorted(measures(points).items(), key=lambda kv: (int(kv[0][2]), kv[0][1], kv[0][0], kv[0][3]))
    cache_path = os.path.join(os.path.dirname(a.out) or ".", "graph_a2av_model_cache.json")
    cache = json.load(open(cache_path)) if os.path.exists(cache_path) else {}
    lines = [f"Made by `python3 bench/smpi/graph_a2av_report.py {' '.join(a.raw)} --out {a.out}`. Cells: simulated us "
             "(ratio to linear in the same measure) [the model's ratio to linear for that candidate]. Every row's data was "
             "checked (0 wrong bytes) before timing.", ""]
    summary = []
    for measure in ("per call (derived)", "sync", "b2b 3 calls", "b2b 30 calls"):
        t, verdicts = table(rows, measure, a.cartplan, cache)
        if len(t) > 4:
            lines += t + [""]
            summary.append((measure, verdicts))
    lines += ["### Against issue 32's alltoallv targets", ""]
    for measure, verdicts in summary:
        if not verdicts:
            continue
        met = [v for v in verdicts if v[1] >= 1.3]
        slow = [v for v in verdicts if v[2] > 1.05]
        lines.append(f"* {measure}: auto >= 1.3x faster than linear at {len(met)} of {len(verdicts)} points"
                     f" ({', '.join(f'{k[0]} p={k[2]} {k[3]} B {g:.2f}x' for k, g, _, _, _ in met) or 'none'}); "
                     f"auto more than 5 % slower than linear at {len(slow)} of {len(verdicts)}"
                     f" ({', '.join(f'{k[0]} p={k[2]} {k[3]} B {r:.3f}' for k, _, r, _, _ in slow) or 'none'}).")
    lines += ["", "Commands (each heads its section of the raw file):", ""]
    lines += [f"* `{c}`" for c in sorted({c for _, slot in rows for c in slot["commands"]})]
    with open(a.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(cache_path, "w") as f:
        json.dump(cache, f, indent=1, sort_keys=True)
    print(a.out)


if __name__ == "__main__":
    main()
