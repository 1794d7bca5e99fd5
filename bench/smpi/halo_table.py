#!/usr/bin/env python3
"""Tables of tools/halo runs (bench/smpi/halo_sweep.sh's files, or any saved `halo` output with the
bytes/rank column): per run the halo API's auto against the best variant, the hand-written
dimension-by-dimension exchange and MPI_Neighbor_alltoallw where present, each as measured us
(predicted us) and bytes sent per rank.

    python3 bench/smpi/halo_table.py bench/results/smpi/halo_*_d*_n*_k*.txt > bench/results/smpi/halo_api.md
    python3 bench/smpi/halo_table.py --runs RUN1.txt RUN2.txt ...   # repeated runs of one configuration:
        # every variant's median over the runs, min-max, predicted us, bytes/rank, and auto against the best
    python3 bench/smpi/halo_table.py --variants RUN1.txt ...   # one row per run: the halo API's plans, the
        # hand-written exchange and Cart_alltoallw's direct plan, each as measured us (predicted us)
    python3 bench/smpi/halo_table.py --linear RUN1.txt ...   # one table per platform: the main job's choice
        # (the halo API's auto) against the linear Isend/Irecv loop, and whether it is slower by more than 5 %
"""
import statistics
import re
import sys

HEADER = re.compile(r"^halo: (\d)-D (\d+)-point Jacobi, np=(\d+), process grid (\S+?),.* n=(\d+) .*halo k=(\d+)")


def parse(path):
    """The run's header fields and its variants {name: (algorithm, us, predicted, bytes, check)}."""
    run = {"path": path, "variants": {}, "order": []}
    in_table = False
    for line in open(path):
        m = HEADER.match(line)
        if m:
            run.update(d=int(m[1]), np=int(m[3]), grid=m[4].rstrip(","), n=int(m[5]), k=int(m[6]))
        if line.startswith("variant ") and "bytes/rank" in line:
            in_table = True
            continue
        if in_table:
            if line.startswith("("):
                in_table = False
                continue
            name, rest = line[:24].strip(), line[24:].split()
            if len(rest) < 5:
                continue
            algo, us, pred, nbytes, check = rest[0], float(rest[1]), rest[2], rest[3], rest[4]
            run["variants"][name] = (algo, us, None if pred == "-" else float(pred), None if nbytes == "-" else int(nbytes), check)
            run["order"].append(name)
        if line.startswith("check: "):
            run["check"] = line.split(":", 1)[1].strip()
    m = re.search(r"halo_([a-z]+)_p", path)
    run["platform"] = m[1] if m else "-"
    return run


def cell(v):
    if v is None:
        return "-"
    algo, us, pred, _, _ = v
    return f"{us:.2f} ({pred:.2f})" if pred is not None else f"{us:.2f}"


def row(run):
    vs = run["variants"]
    auto = vs.get("cartplan halo API")
    if auto is None:
        return None
    best_name = min(vs, key=lambda name: vs[name][1])
    best = vs[best_name]
    hand = vs.get("hand-written dimwise")
    nbr = vs.get("MPI_Neighbor_alltoallw")
    ratio = auto[1] / best[1]
    return "| {} | {} | {} | {} | {} | {} | {} ({}) | {:.3f} | {} | {} | {} | {} | {} |".format(
        run["platform"], run["d"], run["n"], run["k"], run["np"], f"{auto[0]}: {cell(auto)}", best_name, cell(best), ratio,
        "yes" if ratio <= 1.05 else "**no**", cell(hand), cell(nbr), f"{auto[3]} / {hand[3] if hand else '-'}",
        run.get("check", "?"))


def runs_table(paths):
    """Repeated runs of one configuration (this machine): per variant the median of the runs' times and their range."""
    runs = [parse(p) for p in paths]
    first = runs[0]
    print(f"{len(runs)} runs: {first.get('d')}-D, np={first.get('np')}, grid {first.get('grid')}, n={first.get('n')}, k={first.get('k')}; "
          f"checks: {', '.join(sorted(set(r.get('check', '?') for r in runs)))}")
    print()
    print("| variant | algorithm | median us | min-max us | predicted us | bytes/rank |")
    print("|---|---|---|---|---|---|")
    med = {}
    for name in first["order"]:
        times = [r["variants"][name][1] for r in runs if name in r["variants"]]
        algo, _, pred, nbytes, _ = first["variants"][name]
        med[name] = statistics.median(times)
        print(f"| {name} | {algo} | {med[name]:.2f} | {min(times):.2f}-{max(times):.2f} | "
              f"{'-' if pred is None else f'{pred:.2f}'} | {'-' if nbytes is None else nbytes} |")
    best = min(med, key=med.get)
    auto = med.get("cartplan halo API")
    if auto is not None:
        nbr = med.get("MPI_Neighbor_alltoallw")
        print()
        print(f"halo API auto / best ({best}): {auto / med[best]:.3f}" +
              (f"; halo API auto / MPI_Neighbor_alltoallw: {auto / nbr:.3f}" if nbr else ""))
        paired_ratios(runs, first)


def paired_ratios(runs, first):
    """Ratios taken within each run, then their median and range over the runs: the halo API's auto
    against MPI_Neighbor_alltoallw and against the best variant of that run, and the noise floor
    (auto against the halo API forced to the plan auto chose: one program, two requests)."""
    twin = "halo API " + first["variants"]["cartplan halo API"][0]
    pairs = [("halo API auto / MPI_Neighbor_alltoallw", lambda v: v["cartplan halo API"][1] / v["MPI_Neighbor_alltoallw"][1]),
             ("halo API auto / best of the run", lambda v: v["cartplan halo API"][1] / min(x[1] for x in v.values())),
             (f"noise floor: halo API auto / {twin} (the same plan)", lambda v: v["cartplan halo API"][1] / v[twin][1])]
    for label, f in pairs:
        try:
            ratios = sorted(f(r["variants"]) for r in runs)
        except KeyError:
            continue
        print(f"per-run {label}: median {statistics.median(ratios):.3f}, range {ratios[0]:.3f}-{ratios[-1]:.3f}")


VARIANT_COLUMNS = ["cartplan halo API", "halo API direct", "halo API combining", "halo API dimwise", "hand-written dimwise",
                   "cartplan direct"]


def variants_table(paths):
    """Per run the variants that answer "is the model's pick the best plan": measured (predicted) each, and the best."""
    print("| platform | d | n | k | p | auto picks | " + " | ".join(VARIANT_COLUMNS) + " | best: auto / best |")
    print("|" + "---|" * (len(VARIANT_COLUMNS) + 7))
    runs = sorted((parse(path) for path in paths), key=lambda r: (r.get("np", 0), r.get("d", 0), r.get("n", 0), r.get("k", 0), r["platform"]))
    for run in runs:
        vs = run["variants"]
        if "cartplan halo API" not in vs:
            continue
        best = min(vs, key=lambda name: vs[name][1])
        cells = [cell(vs.get(name)) for name in VARIANT_COLUMNS]
        print(f"| {run['platform']} | {run['d']} | {run['n']} | {run['k']} | {run['np']} | {vs['cartplan halo API'][0]} | "
              + " | ".join(cells) + f" | {best}: {vs['cartplan halo API'][1] / vs[best][1]:.3f} |")


LINEAR_KINDS = ("faster", "within 5 %", "slower")


def linear_verdict(ratio):
    """auto / loop as issue 30 reads it: (kind, text): faster by more than 5 %, within 5 % either way, or slower
    by more than 5 % (the criterion's failure)."""
    if ratio > 1.05:
        return "slower", f"**slower by more than 5 %** ({ratio:.2f}x the loop's time)"
    if ratio < 0.95:
        return "faster", f"faster, {1 / ratio:.2f}x"
    return "within 5 %", "within 5 %"


def linear_table(paths):
    """Per platform, per run: the halo API's auto against the linear loop, measured (predicted), the ratio,
    the difference in us and the verdict; then a count of each verdict."""
    parsed = [parse(path) for path in paths]
    runs = [r for r in parsed if "cartplan halo API" in r["variants"] and "linear Isend/Irecv" in r["variants"]]
    left_out = [r["path"].rsplit("/", 1)[-1] for r in parsed if r not in runs]
    if left_out:
        print("Left out (no halo API or no linear loop in the run, e.g. tools/halo before issue 33, or not finished): "
              + ", ".join(f"`{name}`" for name in sorted(left_out)) + ".")
        print()
    slower = []
    for platform in sorted({r["platform"] for r in runs}):
        rows = sorted((r for r in runs if r["platform"] == platform), key=lambda r: (r["np"], r["d"], r["n"], r["k"]))
        print(f"### {platform}")
        print()
        print("| p | d | n | k | auto: plan us (predicted) | linear loop: us (predicted) | best variant: us | auto / loop | "
              "loop - auto us | verdict | check | file |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        kinds = []
        for r in rows:
            vs = r["variants"]
            auto, loop = vs["cartplan halo API"], vs["linear Isend/Irecv"]
            best = min(vs, key=lambda name: vs[name][1])
            kind, text = linear_verdict(auto[1] / loop[1])
            kinds.append(kind)
            if kind == "slower":
                slower.append(r["path"])
            print(f"| {r['np']} | {r['d']} | {r['n']} | {r['k']} | {auto[0]} {cell(auto)} | {cell(loop)} | "
                  f"{best} {vs[best][1]:.2f} | {auto[1] / loop[1]:.3f} | {loop[1] - auto[1]:+.2f} | {text} | "
                  f"{r.get('check', '?')} | `{r['path'].rsplit('/', 1)[-1]}` |")
        counts = ", ".join(f"{kinds.count(k)} {k}" for k in LINEAR_KINDS)
        print()
        print(f"{platform}: {len(rows)} points: auto against the loop {counts} (5 % either way).")
        print()
    if slower:
        print("### Slower than the loop by more than 5 %: the halo plans, measured (predicted)")
        print()
        variants_table(slower)
        print()


def main(paths):
    if paths and paths[0] == "--linear":
        linear_table(paths[1:])
        return
    if paths and paths[0] == "--runs":
        runs_table(paths[1:])
        return
    if paths and paths[0] == "--variants":
        variants_table(paths[1:])
        return
    print("| platform | d | n | k | p | halo API auto: us (predicted) | best variant: us (predicted) | auto / best | within 5 % | "
          "hand-written dimwise | MPI_Neighbor_alltoallw | bytes/rank auto / hand-written | check |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    runs = sorted((parse(path) for path in paths), key=lambda r: (r.get("np", 0), r.get("d", 0), r.get("n", 0), r.get("k", 0), r["platform"]))
    for run in runs:
        r = row(run)
        if r:
            print(r)


if __name__ == "__main__":
    main(sys.argv[1:])
