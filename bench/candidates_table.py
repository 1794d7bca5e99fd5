#!/usr/bin/env python3
"""Markdown tables from exchange_bench --candidates CSVs: per point every optimizer candidate's
measured median next to the model's prediction, the best measured candidate, the candidate auto
picked and auto / best, and the count of points where auto is within 10% of the best candidate.

Usage: candidates_table.py [--scale] CSV...   (markdown on stdout)
  default  the auto check (bench/run.sh: candidates_np2.md)
  --scale  first a table per configuration with the baselines and measured / predicted for each
           candidate, then the auto check (bench/scale.sh: scale_np8.md)

"auto / best" compares the measured time of the candidate auto picked (its own cand: row, same
plan as auto's request) with the fastest candidate: it judges the choice, not the noise between
two runs of one plan; the cart_auto_persistent request's own time is listed next to it.
Candidates whose lowered programs are equal on every rank up to tags (the CSV's program column,
exchange_bench) count as one choice: the pick ran the fastest of them. The spread between
requests that run equal programs (an A/A comparison, the same run) is reported as the noise
floor that the 10% tolerance has to be read against."""
import csv
import statistics
import sys
from collections import defaultdict

TOLERANCE = 1.10  # "within 10%": what the auto check of bench/README.md accepts at np = 2


def load(paths):
    points = defaultdict(dict)
    for path in paths:
        with open(path) as f:
            for r in csv.DictReader(f):
                key = (int(r["np"]), r.get("dims", ""), r["stencil"], r["op"], int(r["m"]))
                points[key][r["variant"]] = r
    return points


def num(x):
    return float(x) if x not in (None, "") else None


def fmt(x, digits=2):
    return "-" if x is None else f"{x:.{digits}f}"


def config(key):
    np_, dims, stencil, _, _ = key
    return f"{stencil} on {dims or '?'} (np={np_})"


def candidates(vs):
    """[(name, measured, predicted)] of the cand: rows, in the benchmark's order."""
    return [(name[len("cand:"):], float(r["median_us"]), num(r.get("predicted_us"))) for name, r in vs.items()
            if name.startswith("cand:")]


def same_program(vs, names):
    """The candidates whose program equals that of one of names (names themselves included)."""
    progs = {vs["cand:" + n].get("program") for n in names if "cand:" + n in vs} - {None, ""}
    return set(names) | {n[len("cand:"):] for n, r in vs.items() if n.startswith("cand:") and r.get("program") in progs}


def aa_spreads(points):
    """[(slowest / fastest, key, names)] per group of requests that ran equal programs in one run."""
    out = []
    for key, vs in points.items():
        groups = defaultdict(list)
        for name, r in vs.items():
            if r.get("program"):
                groups[r["program"]].append((float(r["median_us"]), name))
        for members in groups.values():
            if len(members) > 1:
                out.append((max(members)[0] / min(members)[0], key, [n for _, n in sorted(members)]))
    return sorted(out)


def aa_summary(points):
    spreads = aa_spreads(points)
    if not spreads:
        return []
    ratios = [s for s, _, _ in spreads]
    worst, key, names = spreads[-1]
    return ["Noise floor (A/A): requests of one run whose programs are equal on every rank up to tags "
            f"(cartplan's direct/combining/auto requests, their untrailed/homes/packed twins where nothing "
            f"changed, and the candidates): {len(ratios)} groups; slowest / fastest median "
            f"{statistics.median(ratios):.2f}, 90th percentile {ratios[int(0.9 * (len(ratios) - 1))]:.2f}, "
            f"above 1.10 in {sum(r > TOLERANCE for r in ratios)}; worst {worst:.2f} ({config(key)} {key[3]} m={key[4]}: "
            f"{', '.join(names)}).", ""]


def auto_row(vs):
    return next((r for name, r in vs.items() if name.startswith("cart_auto_persistent")), None)


def judge(vs):
    """The auto check of one point: (best name, best µs, pick, pick µs, pick / best), or None
    without candidates. pick / best is None when the point has no auto request."""
    auto = auto_row(vs)
    return judge_pick(vs, auto["auto_pick"] if auto else "")


def judge_measured(vs):
    """The same for the request in measuring mode (cart_measured_persistent; its pick is the
    candidates it runs, the CSV's runs column), or None where the point has none."""
    row = vs.get("cart_measured_persistent")
    if row is None or not row.get("runs"):
        return None
    return judge_pick(vs, row["runs"])


def judge_pick(vs, pick):
    cands = candidates(vs)
    if not cands:
        return None
    best_name, best_t, _ = min(cands, key=lambda c: c[1])
    # Equal schedules are listed together ("combining|hybrid"), and candidates whose programs
    # are equal count with them: the pick ran the fastest of them.
    equal = same_program(vs, pick.split("|")) if pick else set()
    if len(equal) > len(pick.split("|")):
        pick = "|".join(sorted(equal))
    pick_t = min((c[1] for c in cands if c[0] in equal), default=None)
    return best_name, best_t, pick, pick_t, (pick_t / best_t if pick_t else None)


def measured_check(points):
    """Measuring mode (Info cartplan_tune = measure) judged like auto: its pick's own candidate
    row against the fastest candidate, same run."""
    within, total, misses, changed = 0, 0, [], 0
    for key in sorted(points):
        judged = judge_measured(points[key])
        auto = judge(points[key])
        if not judged or judged[4] is None:
            continue
        total += 1
        best_name, best_t, pick, pick_t, ratio = judged
        if auto and auto[2] and set(auto[2].split("|")) != set(pick.split("|")):
            changed += 1
        if ratio <= TOLERANCE:
            within += 1
        else:
            misses.append(f"- {config(key)} {key[3]} m={key[4]}: measuring picked {pick} ({pick_t:.2f} µs), "
                          f"best {best_name} ({best_t:.2f} µs), x{ratio:.2f}")
    if not total:
        return []
    lines = ["## Measuring mode against every optimizer candidate (cartplan_tune = measure, same run)", "",
             f"The request in measuring mode ran a candidate within 10% of the best in {within} of {total} points; "
             f"it ran another plan than the model's pick in {changed}.", ""]
    if misses:
        lines += ["Misses:", ""] + misses + [""]
    return lines


def auto_check(points):
    lines = ["## Auto against every optimizer candidate (persistent requests, same run)", "",
             "Times are medians in µs of the per-repetition maximum over ranks; a candidate's cell is "
             "measured (predicted). **Bold**: the fastest measured candidate.", "",
             "| config | op | m | candidates: measured (predicted) | best | auto picked | pick / best | auto request µs | auto request / best |",
             "|---|---|---|---|---|---|---|---|---|"]
    within, total, misses = 0, 0, []
    for key in sorted(points):
        vs = points[key]
        judged = judge(vs)
        if not judged:
            continue
        best_name, best_t, pick, pick_t, ratio = judged
        cands = candidates(vs)
        auto = auto_row(vs)
        auto_t = float(auto["median_us"]) if auto else None
        cells = "; ".join((f"**{n}** " if n == best_name else f"{n} ") + f"{t:.2f} ({fmt(p)})" for n, t, p in cands)
        lines.append(f"| {config(key)} | {key[3]} | {key[4]} | {cells} | {best_name} | {pick or '-'} | {fmt(ratio)} | "
                     f"{fmt(auto_t)} | {fmt(auto_t / best_t if auto_t else None)} |")
        if ratio is None:
            continue
        total += 1
        if ratio <= TOLERANCE:
            within += 1
        else:
            by_prediction = sorted((c for c in cands if c[2] is not None), key=lambda c: c[2])
            misses.append(f"- {config(key)} {key[3]} m={key[4]}: auto picked {pick} ({pick_t:.2f} µs), "
                          f"best {best_name} ({best_t:.2f} µs), x{ratio:.2f}; the model ranked "
                          + ", ".join(f"{n} {p:.2f}" for n, _, p in by_prediction))
    lines += ["", f"Auto within 10% of the best candidate in {within} of {total} points.", ""] + aa_summary(points)
    if misses:
        lines += ["Misses:", ""] + misses + [""]
    return lines


def scale_table(points):
    base = [("mpi_neighbor", "MPI_Neighbor"), ("mpix_persistent", "MPIX pers."), ("cart_direct_persistent", "direct pers."),
            ("cart_combining_persistent", "combining pers."), ("cart_auto_persistent", "auto pers."),
            ("packed_proxy", "packed proxy"), ("proxy_floor", "proxy + copies")]
    kinds = ["direct", "combining", "log-round", "hybrid"]
    lines = ["## Measured and predicted per configuration", "",
             "Baselines: medians in µs. Candidates: measured / predicted µs (measured ÷ predicted); "
             "'-' where the optimizer has no such candidate (log-round: alltoall only, where it saves rounds).", "",
             "| config | op | m | " + " | ".join(label for _, label in base) + " | " + " | ".join(kinds) + " | other candidates |",
             "|" + "---|" * (3 + len(base) + len(kinds) + 1)]
    for key in sorted(points):
        vs = points[key]
        cells = []
        for variant, _ in base:
            r = vs.get(variant) or next((x for n, x in vs.items() if n.startswith(variant)), None)
            cells.append(fmt(num(r["median_us"])) if r else "-")
        cands = {n: (t, p) for n, t, p in candidates(vs)}
        for k in kinds:
            if k not in cands:
                cells.append("-")
                continue
            t, p = cands[k]
            cells.append(f"{t:.2f} / {fmt(p)} ({fmt(t / p if p else None)})")
        others = [f"{n}: {t:.2f} / {fmt(p)} ({fmt(t / p if p else None)})" for n, (t, p) in cands.items() if n not in kinds]
        lines.append(f"| {config(key)} | {key[3]} | {key[4]} | " + " | ".join(cells) + f" | {'; '.join(others) or '-'} |")
    return lines + [""]


def main(argv):
    scale = "--scale" in argv
    paths = [a for a in argv if a != "--scale"]
    if not paths:
        sys.exit("candidates_table.py: give one or more exchange_bench --candidates CSVs")
    points = load(paths)
    if not any(candidates(vs) for vs in points.values()):
        sys.exit("candidates_table.py: no cand: rows in " + ", ".join(paths) + " (run exchange_bench with --candidates)")
    lines = ["# Optimizer candidates, measured against predicted", ""]
    if scale:
        lines += scale_table(points)
    lines += auto_check(points)
    lines += measured_check(points)
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:])
