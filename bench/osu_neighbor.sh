#!/usr/bin/env bash
# The drop-in against plain Open MPI on OSU-style neighbourhood benchmarks (issue 34):
# bench/osu_neighbor (a standard-API program) run plain and with libcartplan_interpose.so
# preloaded, alternating in one run, over OSU OMB's configurations of the issue (graph 1-D
# Moore r=1 at np=2, graph 1-D ring r=2 at np=4, cart and graph 2-D Moore r=1 at np=9, cart 3-D
# Moore r=1 at np=27) and two held-out ones where combining pays (cart 3-D and 4-D Moore r=1 at
# np=2); allgather and alltoall, blocking and non-blocking (and persistent at np=2), 1 B to 4 KB.
# Every configuration also runs the preloaded library switched off (CARTPLAN_INTERPOSE=0: the
# same binaries and library, every call straight to Open MPI), an A/A control: its ratio to
# plain is this machine's noise for that configuration (large where ranks share cores). At np=2
# it also runs the native API's same stencil (osu_neighbor_native, auto) and the drop-in forced to
# direct (CARTPLAN_INTERPOSE_ALGORITHM=direct); on a one-offset shift at np=2 (graph-shift-np2:
# one message per process in every plan) that difference is cartplan's per-call overhead.
#
# Writes bench/results/<tag>/osu.csv (every run), osu_verdicts.txt (CARTPLAN_VERBOSE's verdicts),
# osu_summary.md (medians over the pairs, ratios, targets) and osu_*.png (gnuplot).
#   bash bench/osu_neighbor.sh               # 3 alternating pairs
#   bash bench/osu_neighbor.sh --pairs 5 --only 'np2$'     # --only: a regex on the config names
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=3
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --pairs) pairs=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    *) echo "osu_neighbor.sh: unknown argument '$1' (--pairs N, --only REGEX)" >&2; exit 2 ;;
  esac
done
source bench/osu_setup.sh
csv=$out/osu.csv
verdicts=$out/osu_verdicts.txt
# name topo d r np iterations [more osu_neighbor flags]
configs=(
  "graph-shift-np2 graph 1 1 2 4000 --shift"
  "graph-1d-r1-np2 graph 1 1 2 4000"
  "graph-1d-r2-np4 graph 1 2 4 1000"
  "cart-2d-r1-np9 cart 2 1 9 300"
  "graph-2d-r1-np9 graph 2 1 9 300"
  "cart-3d-r1-np27 cart 3 1 27 40"
  "cart-3d-r1-np2 cart 3 1 2 2000"
  "cart-4d-r1-np2 cart 4 1 2 1000"
)
echo "config,np,op,form,mode,pair,bytes,avg_us,min_us,max_us,median_us" > "$csv"
{ echo "# CARTPLAN_VERBOSE=1 of the first preloaded run of each configuration, op and form"; uptime; } > "$verdicts"
one_run() {  # config np op form mode pair iterations topo d r [flags]
  local name=$1 np=$2 op=$3 form=$4 mode=$5 pair=$6 iters=$7 topo=$8 d=$9 r=${10}
  local flags=("${@:11}")
  local bin=$prog pre=()
  case "$mode" in
    preload) pre=(-x LD_PRELOAD="$lib") ;;
    direct) pre=(-x LD_PRELOAD="$lib" -x CARTPLAN_INTERPOSE_ALGORITHM=direct) ;;
    disabled) pre=(-x LD_PRELOAD="$lib" -x CARTPLAN_INTERPOSE=0) ;;
    native) bin=$native ;;
  esac
  local verbose=()
  if [ "$mode" = preload ] && [ "$pair" = 0 ]; then
    verbose=(-x CARTPLAN_VERBOSE=1)
    echo "== $name $op $form" >> "$verdicts"
  fi
  mpirun --oversubscribe --allow-run-as-root -np "$np" "${pre[@]}" "${verbose[@]}" "$bin" --topo "$topo" --d "$d" --r "$r" \
    --op "$op" --form "$form" --sizes "$sizes" --iterations "$iters" --warmup $((iters / 10 + 1)) --check "${flags[@]}" 2>>"$verdicts" |
    awk -v pre="$name,$np,$op,$form,$mode,$pair" '$1 == "ERRORS" { print "wrong data: " pre " " $0 > "/dev/stderr"; exit 1 }
                                                  { print pre "," $1 "," $2 "," $3 "," $4 "," $5 }' >> "$csv"
}
for config in "${configs[@]}"; do
  read -r name topo d r np iters flags <<< "$config"
  [ -n "$only" ] && ! [[ "$name" =~ $only ]] && continue
  forms="blocking nonblocking"
  modes="plain preload disabled"
  if [ "$np" = 2 ]; then forms="blocking nonblocking persistent"; modes="plain preload disabled native direct"; fi
  for op in allgather alltoall; do
    for form in $forms; do
      echo "osu_neighbor.sh: $name $op $form" >&2
      for ((i = 0; i < pairs; ++i)); do
        # shellcheck disable=SC2086  # flags: zero or more words
        for mode in $modes; do one_run "$name" "$np" "$op" "$form" "$mode" "$i" "$iters" "$topo" "$d" "$r" $flags; done
      done
    done
  done
done
uptime >> "$verdicts"
python3 bench/osu_summary.py "$csv" "$verdicts" "$out"
if command -v gnuplot >/dev/null; then
  for dat in "$out"/osu_*.dat; do
    base=${dat%.dat}
    gnuplot <<GP
set terminal png size 900,520 noenhanced
set output "$base.png"
set title "$(basename "$base"): median avg latency over alternating runs"
set logscale xy
set xlabel "message bytes"
set ylabel "latency (us)"
set key left top
plot "$dat" using 1:2 with linespoints title "Open MPI", "" using 1:3 with linespoints title "drop-in (auto)", \
     "" using 1:4 with linespoints title "native API (auto)"
GP
  done
fi
