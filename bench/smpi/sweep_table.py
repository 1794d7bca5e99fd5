#!/usr/bin/env python3
"""Turns collective_bench's output (stdin) into markdown rows appended to a sweep table.

    python3 bench/smpi/sweep_table.py --platform torus --model FILE --command CMD --out table.md < raw.txt

One row per (np, stencil, op, m): the linear loop, auto (and the plan it ran), every cartplan
candidate as a persistent request, each "measured (predicted)" in simulated microseconds, the
best candidate, auto / best (the optimizer's miss; 1.00 = it picked the fastest), linear / auto
(cartplan's gain over the loop Open MPI and MPICH run), the back-to-back times of auto and the
linear loop, whether every variant's data was right, and the command that reproduces the row ($M
in it is the row's m). "Measured" is collective_bench's synchronized time (sync_us) where it has
one (SMPI), else its back-to-back time (docs/smpi.md, "Timing"); --measure b2b takes the
back-to-back time everywhere.
"""
import argparse
import os
import sys

CANDIDATES = [("direct", "cart_direct_persistent"), ("combining", "cart_combining_persistent"),
              ("hybrid", "cart_hybrid_persistent"), ("log-round", "cart_loground_persistent")]
HEADER = ("| platform | p | stencil | op | m | model | linear | auto (plan) | auto blocking | direct | combining | hybrid | "
          "log-round | best | auto / best | linear / auto | auto b2b | linear b2b | data | command |")


def parse(lines, measure="sync"):
    """{(np, stencil, op, m): {variant: (algorithm, measured, predicted, check, back_to_back)}} in input order."""
    points = {}
    for line in lines:
        if not line.strip() or line.startswith("#"):
            continue
        f = line.split()
        if len(f) != 10:
            sys.exit(f"sweep_table.py: not a collective_bench row: {line.rstrip()}")
        np_, stencil, op, m, variant, algorithm, us, sync_us, predicted, check = f
        measured = float(sync_us) if sync_us != "nan" and measure == "sync" else float(us)
        points.setdefault((int(np_), stencil, op, int(m)), {})[variant] = (algorithm, measured, float(predicted), check, float(us))
    return points


def cell(v):
    _, us, predicted, _, _ = v
    return f"{us:.2f} ({predicted:.2f})" if predicted == predicted else f"{us:.2f}"


def row(key, vs, platform, model, command):
    np_, stencil, op, m = key
    cands = {name: vs[v] for name, v in CANDIDATES if v in vs}
    best = min(cands, key=lambda n: cands[n][1])
    auto = vs["cart_auto_persistent"]
    linear = vs["linear"]
    data = "OK" if all(v[3] == "OK" for v in vs.values()) else "WRONG"
    model_name = os.path.basename(model) if model != "builtin" else "builtin"
    return (f"| {platform} | {np_} | `{stencil}` | {op} | {m} | {model_name} | {cell(linear)} | {cell(auto)} {auto[0]} | " +
            (f"{vs['cart_auto_blocking'][1]:.2f}" if "cart_auto_blocking" in vs else "-") + " | " + " | ".join(cell(cands[n]) if n in cands else "-" for n, _ in CANDIDATES) +
            f" | {best} | {auto[1] / cands[best][1]:.2f} | {linear[1] / auto[1]:.2f} | {auto[4]:.2f} | {linear[4]:.2f} | {data} | "
            f"`{command.replace('$M', str(m)).replace(chr(34), '')}` |")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--platform", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--measure", choices=["sync", "b2b"], default="sync",
                    help="the measured column: sync (default where there is one) or the back-to-back time")
    a = ap.parse_args(argv)
    points = parse(sys.stdin, a.measure)
    if not points:
        sys.exit("sweep_table.py: no rows on stdin")
    new = not os.path.exists(a.out) or os.path.getsize(a.out) == 0
    with open(a.out, "a") as f:
        if new:
            measured = ("one call after a barrier, from the last rank's entry to the last rank's exit (b2b: back to back)"
                        if a.measure == "sync" else "back to back, the max over ranks of each rank's time per call after the "
                        "warm-up calls (the b2b columns repeat it)")
            f.write("Simulated microseconds per call, `measured (predicted by the cost model)`; measured: " + measured +
                    "; persistent requests unless named; docs/smpi.md describes platforms and timing.\n\n")
            f.write(HEADER + "\n|" + "---|" * HEADER.count(" | ") + "---|\n")
        for key, vs in points.items():
            f.write(row(key, vs, a.platform, a.model, a.command) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
