#!/usr/bin/env python3
"""Per-call instruction counts from callgrind profiles (bench/callgrind_overhead.sh).

Each profile collected the instructions inside the benchmark's timed calls only (warm-up and
the first call's planning stay outside), so a figure divided by the number of calls is one
call. Columns per call:
  total      instructions inside the timed calls (inclusive)
  no_poll    total without the self cost of polling, whose amount depends on when the peer's
             message lands (the machine's load): opal_progress and what it calls every round
             or every few rounds (Open MPI's vader progress function and libopen-pal's
             unnamed helpers, libevent, libnbc's progress function), and the waiting
             functions' own loops (ompi_request_default_wait*, whose few instructions of real
             work per call go with them, in every mode alike). What a round finds (matching,
             callbacks, cartplan's progress callback) stays counted. Each case runs several
             times; the run with the fewest no_poll instructions is shown, with the spread.
  cartplan   self cost in cartplan's code (libcartplan_interpose.so, or the native binary's
             own functions but the benchmark's loop)
  polled     total - no_poll: the polling instructions of that run (how long it waited)
  rounds     calls of opal_progress (progress rounds) per call, and total / rounds: what one
             round costs in that mode (a progress callback that works in every round, as
             cartplan's does while a drop-in request is pending, shows here)

  python3 bench/callgrind_table.py MANIFEST > table.md
MANIFEST: tab-separated lines "label calls file [file...]" (one file per run).
"""
import collections
import re
import sys

POLL_FUNCTIONS = {"opal_progress", "ompi_coll_libnbc_progress", "ompi_request_default_wait", "ompi_request_default_wait_all",
                  "ompi_request_default_wait_any", "ompi_request_default_wait_some"}


def name_of(table, rest):
    m = re.match(r"\((\d+)\)(?:\s+(.*))?$", rest)
    if not m:
        return rest
    if m.group(2) is not None:
        table[m.group(1)] = m.group(2)
    return table.get(m.group(1), rest)


def parse(path):
    """Self cost per (object, function), calls per callee function, and the total."""
    fns, obs, files = {}, {}, {}
    self_cost = collections.Counter()
    calls = collections.Counter()
    ob = fn = cfn = None
    pending_calls = None
    total = 0
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            m = re.match(r"^([a-z]+)=(.*)$", line)
            if m:
                key, rest = m.groups()
                if key == "ob":
                    ob = name_of(obs, rest)
                elif key == "cob":
                    name_of(obs, rest)
                elif key == "fn":
                    fn = name_of(fns, rest)
                elif key == "cfn":
                    cfn = name_of(fns, rest)
                elif key in ("fl", "fi", "fe", "cfi", "cfl"):
                    name_of(files, rest)
                elif key == "calls":
                    pending_calls = int(rest.split()[0])
                continue
            if line.startswith("totals:") or line.startswith("summary:"):
                total = int(line.split()[1])
                continue
            if not (line[0].isdigit() or line[0] in "+-*"):
                continue
            parts = line.split()
            if len(parts) < 2:
                continue
            if pending_calls is not None:  # the inclusive cost of a call: not self cost
                calls[cfn] += pending_calls
                pending_calls = None
                continue
            self_cost[(ob or "", fn or "")] += int(parts[1])
    return self_cost, calls, total


def is_poll(ob, fn):
    base = ob.rsplit("/", 1)[-1]
    if fn in POLL_FUNCTIONS or base.startswith("libevent"):
        return True
    # Unnamed functions of the vader transport (its progress function) and of libopen-pal
    # (what opal_progress calls every few rounds).
    return (base.startswith("mca_btl_vader") or base.startswith("libopen-pal")) and fn.startswith("0x")


def is_cartplan(ob, fn):
    base = ob.rsplit("/", 1)[-1]
    if base.startswith("libcartplan_interpose"):
        return True
    return base == "osu_neighbor_native" and "calls(" not in fn


def figures(path):
    self_cost, calls, total = parse(path)
    poll = sum(c for (ob, fn), c in self_cost.items() if is_poll(ob, fn))
    ours = sum(c for (ob, fn), c in self_cost.items() if is_cartplan(ob, fn))
    return {"total": total, "no_poll": total - poll, "cartplan": ours, "polled": poll, "rounds": calls.get("opal_progress", 0)}


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    print("| case | total | no_poll (spread over runs) | cartplan | polled | rounds | per round |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    with open(argv[1]) as f:
        for line in f:
            if not line.strip():
                continue
            label, n, *files = line.rstrip("\n").split("\t")
            runs = sorted(({k: v / int(n) for k, v in figures(p).items()} for p in files), key=lambda r: r["no_poll"])
            best, spread = runs[0], f"{runs[0]['no_poll']:.0f}-{runs[-1]['no_poll']:.0f}"
            per_round = f"{best['total'] / best['rounds']:.0f}" if best["rounds"] else "-"
            print(f"| {label} | {best['total']:.0f} | {best['no_poll']:.0f} ({spread}) | {best['cartplan']:.0f} | {best['polled']:.0f} "
                  f"| {best['rounds']:.1f} | {per_round} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
