#!/usr/bin/env bash
# Non-blocking Cart_ialltoallw and blocking Cart_halo_exchange_fields with derived datatypes:
# before and after their exchanges were reused by datatype layout (the non-blocking pool, the
# halo's kept exchanges), two builds of bench/derived_paths_bench alternated RUNS times at NP ranks
# on the main job's default shape (2-D Moore torus, n=64, one ghost layer), 200 calls per variant.
# NP=1 (every neighbour the process itself, by periodic wrap) measures what a call costs its own
# process, building or not, without waiting for other processes on a loaded machine.
# Blocking Cart_alltoallw with derived datatypes and Cart_halo_exchange with MPI_DOUBLE (both
# reused before too) run beside them in the same runs.
#   bash bench/derived_paths_ab.sh BEFORE_BIN AFTER_BIN [RUNS] [NP] [NAME] [ABOUT]
#   # -> bench/results/cpp-2core/NAME_npNP.md (NAME: derived_paths_ab); ABOUT: what BEFORE and AFTER
#   # are, a sentence for the file (default: without / with the layout-keyed reuse)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
before=$1 after=$2 runs=${3:-9} np=${4:-4} name=${5:-derived_paths_ab}
about=${6:-"BEFORE = derived_paths_bench built without the layout-keyed reuse on these paths (every non-blocking call and every halo exchange with a derived datatype builds its exchange), AFTER = with it"}
export OMPI_MCA_mpi_yield_when_idle=1
out=bench/results/cpp-2core/${name}_np$np.md
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
load_start=$(cat /proc/loadavg)
for r in $(seq 1 "$runs"); do
  for b in before after; do
    bin=$before; [ "$b" = after ] && bin=$after
    load=$(cut -d' ' -f1 /proc/loadavg)
    # One row per variant: run, build, load, variant, us.
    mpirun --oversubscribe --allow-run-as-root -np "$np" "$bin" --iters 200 2>&1 |
      awk -v r="$r" -v b="$b" -v load="$load" 'NF >= 2 { us = $NF; $NF = ""; sub(/ +$/, ""); printf "%s\t%s\t%s\t%s\t%s\n", r, b, load, $0, us }'
  done
done >"$rows"
load_end=$(cat /proc/loadavg)
python3 - "$rows" "$runs" "$load_start" "$load_end" "$np" "$about" "$*" >"$out" <<'PY'
import statistics, sys, datetime
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
runs, load_start, load_end, np, about, args = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7]
variants = list(dict.fromkeys(r[3] for r in rows))
print("# Derived datatypes on the non-blocking pool and the halo's blocking exchanges: BEFORE / AFTER\n")
print(f"`bash bench/derived_paths_ab.sh {args}` ({datetime.date.today()}): {about};")
print(f"alternated, each `mpirun -np {np} derived_paths_bench --iters 200`")
print("(2-D Moore torus, n=64 doubles, one ghost layer, grid from MPI_Dims_create). us: max over ranks of the per-rank")
print("median time of one call. A shared 2-core machine with other helpers' builds running (load: the 1-minute")
print(f"load average before the run): compare columns within one run. /proc/loadavg at the start: {load_start}; at the end: {load_end}.\n")
print("| run | build | load | " + " | ".join(variants) + " |")
print("|---|---|---|" + "---|" * len(variants))
by = {}
for r in rows:
    by.setdefault((r[0], r[1]), {})[r[3]] = r[4]
    by[(r[0], r[1])]["load"] = r[2]
for (run, build), v in by.items():
    print(f"| {run} | {build} | {v['load']} | " + " | ".join(v.get(x, "-") for x in variants) + " |")
print("\nMedian over runs (min-max), us:\n")
print("| variant | BEFORE | AFTER |\n|---|---|---|")
for x in variants:
    cells = []
    for build in ("before", "after"):
        vals = sorted(float(v[x]) for (run, b), v in by.items() if b == build and x in v)
        cells.append(f"{statistics.median(vals):.2f} ({vals[0]:.2f}-{vals[-1]:.2f})" if vals else "-")
    print(f"| {x} | {cells[0]} | {cells[1]} |")
# Each path against the call of the same run that kept its exchange in both builds: a ratio is
# less moved than a time by the load of the moment.
# "halo predefined" runs no derived datatype: the reference for changes to how derived ones are held.
pairs = [("ialltoallw derived", "alltoallw blocking derived"), ("halo fields derived", "halo predefined"),
         ("ialltoallw derived", "halo predefined"), ("alltoallw blocking derived", "halo predefined")]
print("\nPer run, the time over its reference in the same run; median over runs (min-max):\n")
print("| ratio | BEFORE | AFTER |\n|---|---|---|")
for x, ref in pairs:
    cells = []
    for build in ("before", "after"):
        vals = sorted(float(v[x]) / float(v[ref]) for (run, b), v in by.items() if b == build and x in v and ref in v)
        cells.append(f"{statistics.median(vals):.2f} ({vals[0]:.2f}-{vals[-1]:.2f})" if vals else "-")
    print(f"| {x} / {ref} | {cells[0]} | {cells[1]} |")
PY
cat "$out"
