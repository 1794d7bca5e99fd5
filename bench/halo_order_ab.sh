#!/usr/bin/env bash
# Issue 33 item 4 ("halo blocking" slower than the persistent halo API in run.sh): two builds of
# tools/halo alternated RUNS times on run.sh's default configuration (4 ranks), with the time and
# load of each run. BEFORE: the round-robin timing with a fixed rotation (commit eb6d736), AFTER:
# shuffled per round (1f7bd70). Rows: the halo API persistent and blocking, the hand-written
# exchange (which in eb6d736 sits just before 'cartplan auto blocking'), and auto blocking.
#   bash bench/halo_order_ab.sh BEFORE_BIN AFTER_BIN [RUNS]   # -> bench/results/cpp-2core/halo_order_ab.md
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
before=$1 after=$2 runs=${3:-5}
export OMPI_MCA_mpi_yield_when_idle=1
out=bench/results/cpp-2core/halo_order_ab.md
{ echo "# Round-robin order and 'halo blocking' (issue 33 item 4)"
  echo
  echo "\`bash bench/halo_order_ab.sh BEFORE AFTER $runs\`: BEFORE = tools/halo of eb6d736 (fixed rotation: every"
  echo "variant always follows the same one), AFTER = tools/halo of 1f7bd70 (order shuffled per round), alternated,"
  echo "each \`mpirun -np 4 halo\` (run.sh's default: 2-D 9-point, 2x2 mesh, n=64, k=1, 50 exchanges per variant)."
  echo "us: max over ranks of the per-rank median. In BEFORE the order is ... halo API, halo blocking, ..., halo API"
  echo "dimwise, hand-written, cartplan auto blocking, ...: the variant just before auto blocking pays."
  echo
  echo "| run | build | time, load | halo API | halo blocking | halo API dimwise | hand-written dimwise | cartplan auto blocking |"
  echo "|---|---|---|---|---|---|---|---|"
  for r in $(seq 1 "$runs"); do
    for b in before after; do
      bin=$before; [ "$b" = after ] && bin=$after
      stamp="$(date -u +%H:%M:%S), $(cut -d' ' -f1 /proc/loadavg)"
      res=$(mpirun --oversubscribe --allow-run-as-root -np 4 "$bin" 2>&1)
      get() { echo "$res" | awk -v n="$1" 'substr($0, 1, 24) ~ "^" n " *$" { split(substr($0, 25), f, " "); print f[2] }'; }
      echo "| $r | $b | $stamp | $(get 'cartplan halo API') | $(get 'cartplan halo blocking') | $(get 'halo API dimwise') | $(get 'hand-written dimwise') | $(get 'cartplan auto blocking') |"
    done
  done; } >"$out"
cat "$out"
