#!/usr/bin/env bash
# Instructions per start -> complete -> wait cycle of each candidate mechanism for the drop-in's
# persistent and non-blocking requests (bench/request_mechanisms.cc says what each is), counted with valgrind's
# callgrind on one process: inclusive instructions of each cycle_* function / cycles. The
# machine's load does not move these counts (nothing waits: every request is complete before
# its wait).
#   bash bench/request_mechanisms.sh [--cycles N]
# Writes the table to stdout and to bench/results/<tag>/request_mechanisms.md (tag cpp-2core
# unless CARTPLAN_MACHINE_TAG is set).
set -euo pipefail
cd "$(dirname "$0")/.."
cycles=10000
while [ $# -gt 0 ]; do
  case "$1" in
    --cycles) cycles=$2; shift 2 ;;
    *) echo "request_mechanisms.sh: unknown argument '$1' (--cycles N)" >&2; exit 2 ;;
  esac
done
out=bench/results/${CARTPLAN_MACHINE_TAG:-cpp-2core}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source bench/build_copy.sh
build_copy "$work" //bench:request_mechanisms
export OMPI_MCA_btl=self,vader OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun --allow-run-as-root -np 1 valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" \
  "$work/request_mechanisms" --cycles "$cycles" > /dev/null 2> "$work/valgrind.log"
callgrind_annotate --inclusive=yes "$work/cg.out" > "$work/annotate.txt"
{
  echo "# Instructions per request cycle (start or create, complete, wait), by mechanism"
  echo
  echo "Command: \`bash bench/request_mechanisms.sh --cycles $cycles\` (git $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- backends bench ':(exclude)bench/results' || echo ', uncommitted changes')); one process, Open MPI $(ompi_info --version 2>/dev/null | head -1 | grep -o 'v[0-9.]*')."
  echo
  echo "| mechanism | instructions per cycle |"
  echo "|---|---:|"
  for m in self_message send_init openmpi_kind grequest openmpi_nonblocking; do
    ir=$(grep -E "[:\* ]cycle_$m( |$)" "$work/annotate.txt" | head -1 | awk '{gsub(",", "", $1); print $1}')
    [ -n "$ir" ] || { echo "request_mechanisms.sh: no count for cycle_$m" >&2; exit 1; }
    echo "| $m | $((ir / cycles)) |"
  done
} | tee "$out/request_mechanisms.md"
