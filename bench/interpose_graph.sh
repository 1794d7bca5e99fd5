#!/usr/bin/env bash
# The drop-in on distributed graphs that are not a stencil (cartplan's graph collectives, issue
# 32) and on the OSU-style graph configurations it already took as stencils, against plain Open
# MPI, alternating in one run: bench/osu_neighbor (standard API) with --holes (a Moore graph with
# about a quarter of its edges dropped: no stencil; 3-D r=1 at np=2, 2-D r=1 at np=4) and
# without (graph 1-D Moore r=1 at np=2, graph 1-D ring r=2 at np=4), allgather and alltoall, blocking, non-blocking and persistent.
# Modes per alternation: plain (no library), disabled (the library preloaded and switched off,
# CARTPLAN_INTERPOSE=0: the A/A control, this machine's noise), auto (the library as shipped:
# the do-no-harm verdicts), combining (forced: what the graph collectives cost where auto passes
# them through) and, with --baseline, an earlier build of the library (before/after in one run).
#
# Writes bench/results/<tag>/interpose_graph/runs.csv (every run), verdicts.txt
# (CARTPLAN_VERBOSE of the first auto run of each configuration) and summary.md (medians over the
# pairs with min-max spread, ratios to plain).
#   bash bench/interpose_graph.sh [--pairs 5] [--baseline OLD/libcartplan_interpose.so]
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=5
baseline=""
while [ $# -gt 0 ]; do
  case "$1" in
    --pairs) pairs=$2; shift 2 ;;
    --baseline) baseline=$(realpath "$2"); shift 2 ;;
    *) echo "interpose_graph.sh: unknown argument '$1' (--pairs N, --baseline LIB)" >&2; exit 2 ;;
  esac
done
out=bench/results/${CARTPLAN_MACHINE_TAG:-cpp-2core}/interpose_graph
mkdir -p "$out"
bazel build //bench:osu_neighbor //backends/interpose:libcartplan_interpose.so >/dev/null 2>&1
bin_dir=$(mktemp -d)  # copies: a rebuild during the run cannot change what is measured
trap 'rm -rf "$bin_dir"' EXIT
cp bazel-bin/bench/osu_neighbor bazel-bin/backends/interpose/libcartplan_interpose.so "$bin_dir"/
[ -n "$baseline" ] && cp "$baseline" "$bin_dir/baseline.so"
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
sizes=1,8,64,512,4096
csv=$out/runs.csv
verdicts=$out/verdicts.txt
modes="plain disabled auto combining"
[ -n "$baseline" ] && modes="$modes baseline"
# name np iterations osu_neighbor flags
configs=(
  "holes-3d-r1-np2 2 1000 --topo graph --d 3 --r 1 --holes"
  "holes-2d-r1-np4 4 200 --topo graph --d 2 --r 1 --holes"
  "graph-1d-r1-np2 2 1000 --topo graph --d 1 --r 1"
  "graph-1d-r2-np4 4 200 --topo graph --d 1 --r 2"
)
echo "config,np,op,form,mode,pair,bytes,avg_us,min_us,max_us,median_us" > "$csv"
{ echo "# CARTPLAN_VERBOSE=1 of the first auto run of each configuration"; uptime; } > "$verdicts"
one_run() {  # name np iterations op form mode pair flags...
  local name=$1 np=$2 iters=$3 op=$4 form=$5 mode=$6 pair=$7
  local flags=("${@:8}") pre=()
  case "$mode" in
    disabled) pre=(-x LD_PRELOAD="$bin_dir/libcartplan_interpose.so" -x CARTPLAN_INTERPOSE=0) ;;
    auto) pre=(-x LD_PRELOAD="$bin_dir/libcartplan_interpose.so") ;;
    combining) pre=(-x LD_PRELOAD="$bin_dir/libcartplan_interpose.so" -x CARTPLAN_INTERPOSE_ALGORITHM=combining) ;;
    baseline) pre=(-x LD_PRELOAD="$bin_dir/baseline.so") ;;
  esac
  if [ "$mode" = auto ] && [ "$pair" = 0 ]; then
    pre+=(-x CARTPLAN_VERBOSE=1)
    echo "== $name $op $form" >> "$verdicts"
  fi
  mpirun --oversubscribe --allow-run-as-root -np "$np" "${pre[@]}" "$bin_dir/osu_neighbor" "${flags[@]}" --op "$op" \
    --form "$form" --sizes "$sizes" --iterations "$iters" --warmup $((iters / 10 + 1)) --check 2>>"$verdicts" |
    awk -v pre="$name,$np,$op,$form,$mode,$pair" '$1 == "ERRORS" { print "wrong data: " pre " " $0 > "/dev/stderr"; exit 1 }
                                                  { print pre "," $1 "," $2 "," $3 "," $4 "," $5 }' >> "$csv"
}
for config in "${configs[@]}"; do
  read -r name np iters flags <<< "$config"
  for op in allgather alltoall; do
    for form in blocking nonblocking persistent; do
      echo "interpose_graph.sh: $name $op $form" >&2
      for ((i = 0; i < pairs; ++i)); do
        # shellcheck disable=SC2086  # flags: several words
        for mode in $modes; do one_run "$name" "$np" "$iters" "$op" "$form" "$mode" "$i" $flags; done
      done
    done
  done
done
uptime >> "$verdicts"
python3 bench/interpose_graph_summary.py "$csv" > "$out/summary.md"
