#!/usr/bin/env python3
"""The table of bench/results/smpi/measure_mode.md: per tools/halo run with `--tune measure`
(bench/smpi/measure_mode.sh), the committed run of the same point without it (the model's pick,
bench/results/smpi/halo_*.txt), measuring mode's pick, the best variant of the measuring run,
and the init's cost: simulated us (tools/halo's "auto init" line), the trials' medians
(CARTPLAN_VERBOSE), and how many exchanges of the measured pick the init costs.

    python3 bench/smpi/measure_mode_table.py bench/results/smpi/measure_mode/halo_*.txt
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from halo_table import parse  # noqa: E402

INIT = re.compile(r"^halo API auto init \(--tune measure\): ([0-9.]+) us")
TRIALS = re.compile(r"^cartplan: measured at init \((\d+) runs each.*?\): (.*); running (\S+)")


def measured(path):
    """The init's us, the trials' text (name median, ...) and the plan they chose."""
    init, trials, chose = None, "-", "-"
    for line in open(path):
        m = INIT.match(line)
        if m:
            init = float(m[1])
        m = TRIALS.match(line)
        if m:
            parts = re.findall(r"(\w+) ([0-9.]+) us", m[2])
            trials, chose = ", ".join(f"{n} {t}" for n, t in parts), m[3]
    return init, trials, chose


def row(path):
    run = parse(path)
    committed = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(path))), os.path.basename(path))
    model = parse(committed)["variants"].get("cartplan halo API") if os.path.exists(committed) else None
    vs = run["variants"]
    auto = vs.get("cartplan halo API")
    if auto is None:
        return f"| {run['platform']} | {run.get('np')} | {run.get('d')} | {run.get('n')} | {run.get('k')} | did not finish | | | | | | | |"
    best_name = min(vs, key=lambda name: vs[name][1])
    best = vs[best_name]
    init, trials, _ = measured(path)
    model_cell = f"{model[0]} {model[1]:.2f} ({model[1] / best[1]:.3f})" if model else "-"
    ratio = auto[1] / best[1]
    calls = f"{init / auto[1]:.0f}" if init is not None else "-"
    init_cell = f"{init:.0f}" if init is not None else "-"
    return (f"| {run['platform']} | {run['np']} | {run['d']} | {run['n']} | {run['k']} | {model_cell} | {auto[0]} {auto[1]:.2f} | "
            f"{best_name}: {best[1]:.2f} | {ratio:.3f} | {'yes' if ratio <= 1.05 else '**no**'} | {init_cell} | {calls} | {trials} |")


def main(paths):
    print("| platform | p | d | n | k | model's pick: us (/ best) | measure's pick: us | best variant: us | measure / best | within 5 % "
          "| init us (measure) | init in exchanges | trials (sync median us) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for path in sorted(paths, key=lambda p: (parse(p).get("np", 0), p)):
        print(row(path))


if __name__ == "__main__":
    main(sys.argv[1:])
