#!/usr/bin/env bash
# Instructions per persistent (and non-blocking) neighbourhood call on one process, where every
# neighbour is the process itself: cart 3-D Moore r=1 at np = 1 (26 blocks, all local copies in
# cartplan's plans, 26 self messages in Open MPI's). No peer, so no waiting and no progress
# rounds: the count is the call's own work whatever the machine's load, which is what compares
# the drop-in's request machinery with the native API's (bench/callgrind_overhead.sh at np = 2
# counts cartplan's progress callback in every round rank 0 waits for its peer, and on a loaded
# machine those rounds dominate). Modes: plain Open MPI, the drop-in (auto and forced direct),
# the same with --baseline's library, the native API (auto).
#   bash bench/callgrind_np1.sh [--baseline OLD.so] [--runs N]
# Writes the table to stdout and to bench/results/<tag>/callgrind_np1.md (tag cpp-2core unless
# CARTPLAN_MACHINE_TAG is set). Columns: bench/callgrind_table.py.
set -euo pipefail
cd "$(dirname "$0")/.."
baseline=""
runs=2
while [ $# -gt 0 ]; do
  case "$1" in
    --baseline) baseline=$(realpath "$2"); shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    *) echo "callgrind_np1.sh: unknown argument '$1' (--baseline LIB, --runs N)" >&2; exit 2 ;;
  esac
done
out=bench/results/${CARTPLAN_MACHINE_TAG:-cpp-2core}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source bench/build_copy.sh
build_copy "$work" //bench:osu_neighbor //bench:osu_neighbor_native //backends/interpose:libcartplan_interpose.so
# The baseline keeps the library's name (callgrind_table.py finds cartplan's code by it).
[ -n "$baseline" ] && mkdir "$work/baseline" && cp "$baseline" "$work/baseline/libcartplan_interpose.so"
export OMPI_MCA_btl=self,vader OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
n=1000
manifest=$work/manifest.tsv
: > "$manifest"
profile() {  # label preload algorithm binary form op
  local label=$1 preload=$2 algorithm=$3 prog=$4 form=$5 op=$6 files=() run
  for run in $(seq "$runs"); do
    local f=$work/$(echo "$label" | tr ' /' '__').$run.out
    mpirun --allow-run-as-root -np 1 -x LD_PRELOAD="$preload" -x CARTPLAN_INTERPOSE_ALGORITHM="$algorithm" \
      valgrind --tool=callgrind --collect-atstart=no '--toggle-collect=*::one_call(*' '--zero-before=*::timed_calls(*' \
      --callgrind-out-file="$f" "$prog" --form "$form" --topo cart --d 3 --r 1 --op "$op" --sizes 8 --iterations "$n" \
      --warmup 100 --batch "$n" > /dev/null 2>&1
    files+=("$f")
  done
  (IFS=$'\t'; echo "$label	$n	${files[*]}") >> "$manifest"
}
for form in persistent nonblocking; do
  for op in allgather alltoall; do
    c="cart3d np1 $op $form"
    profile "$c plain" "" auto "$work/osu_neighbor" "$form" "$op"
    profile "$c preload" "$work/libcartplan_interpose.so" auto "$work/osu_neighbor" "$form" "$op"
    profile "$c direct" "$work/libcartplan_interpose.so" direct "$work/osu_neighbor" "$form" "$op"
    if [ -n "$baseline" ]; then
      profile "$c baseline" "$work/baseline/libcartplan_interpose.so" auto "$work/osu_neighbor" "$form" "$op"
      profile "$c baseline-direct" "$work/baseline/libcartplan_interpose.so" direct "$work/osu_neighbor" "$form" "$op"
    fi
    profile "$c native-auto" "" auto "$work/osu_neighbor_native" "$form" "$op"
  done
done
table=$(python3 bench/callgrind_table.py "$manifest")
{
  echo "# Instructions per call on one process (cart 3-D Moore r=1, np = 1, 8-byte blocks)"
  echo
  echo "Command: \`bash bench/callgrind_np1.sh${baseline:+ --baseline $baseline} --runs $runs\`"
  echo "(git $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- backends bench ':(exclude)bench/results' || echo ', uncommitted changes')). Columns: bench/callgrind_table.py."
  echo
  echo "$table"
} | tee "$out/callgrind_np1.md"
