#!/usr/bin/env bash
# Blocking Cart_alltoallw with derived datatypes (the main job's 'cartplan auto blocking'):
# before and after the blocking cache keyed by datatype layout, two builds of tools/halo
# alternated RUNS times on run.sh's default configuration (4 ranks), 200 exchanges per variant,
# with the persistent 'cartplan auto' and MPI_Neighbor_alltoallw of the same run beside them.
#   bash bench/blocking_derived_ab.sh BEFORE_BIN AFTER_BIN [RUNS]   # -> bench/results/cpp-2core/blocking_derived_ab.md
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
before=$1 after=$2 runs=${3:-7}
export OMPI_MCA_mpi_yield_when_idle=1
out=bench/results/cpp-2core/blocking_derived_ab.md
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
for r in $(seq 1 "$runs"); do
  for b in before after; do
    bin=$before; [ "$b" = after ] && bin=$after
    load=$(cut -d' ' -f1 /proc/loadavg)
    mpirun --oversubscribe --allow-run-as-root -np 4 "$bin" --iters 200 2>&1 |
      awk -v r="$r" -v b="$b" -v load="$load" '
        { name = substr($0, 1, 24); sub(/ +$/, "", name); split(substr($0, 25), f, " ") }
        name == "cartplan auto" { p = f[2] } name == "cartplan auto blocking" { q = f[2] }
        name == "MPI_Neighbor_alltoallw" { m = f[2] }
        END { printf "| %s | %s | %s | %s | %s | %s |\n", r, b, load, p, q, m }'
  done
done >"$rows"
median() { awk -v b="$1" -v c="$2" -F'|' '$3 ~ " " b " " { print $c + 0 }' "$rows" | sort -g |
  awk '{ v[NR] = $1 } END { if (NR) printf "%.2f (%.2f-%.2f)", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, v[1], v[NR] }'; }
{ echo "# Blocking Cart_alltoallw with derived datatypes: the blocking cache keyed by layout"
  echo
  echo "\`bash bench/blocking_derived_ab.sh BEFORE AFTER $runs\` ($(date -u +%F)): BEFORE = tools/halo without the layout-keyed"
  echo "cache (every blocking call with derived datatypes builds its exchange again), AFTER = with it; alternated, each"
  echo "\`mpirun -np 4 halo --iters 200\` (run.sh's default: 2-D 9-point, 2x2 mesh, n=64, k=1). us: max over ranks of"
  echo "the per-rank median exchange time. A shared, oversubscribed 2-core machine: compare columns within one run."
  echo
  echo "| run | build | load | cartplan auto (persistent) | cartplan auto blocking | MPI_Neighbor_alltoallw |"
  echo "|---|---|---|---|---|---|"
  cat "$rows"
  echo
  echo "Median over runs (min-max): auto blocking BEFORE $(median before 6) us, AFTER $(median after 6) us;"
  echo "persistent auto BEFORE $(median before 5) us, AFTER $(median after 5) us."; } >"$out"
cat "$out"
