#!/usr/bin/env bash
# One point of the graph-collective sweep under SimGrid's SMPI: builds the platform for the
# graph's rank count (bench/smpi/platforms.py), runs bench/graph_scale_bench (SMPI build: linear,
# pairing, cumulative, auto by default, grid (2-D virtual grid) and gridN (N-D: grid3, grid4, grid8, ...) on request; persistent; data checked before timing) under smpirun and appends
# its output, headed by the command that reproduces it and the simulation's wall time, to the raw
# file; one line per run goes to the wall-time log. bench/smpi/graph_report.py makes the tables.
#
#   bash bench/smpi/graph_sweep.sh --platform fattree --graph random:p=256,q=0.05,seed=1 --ops allgather,alltoallv --bytes 4,1024
#        [--iters 3] [--reps 2] [--theta 4] [--model FILE|builtin] [--limit SECONDS] [--out bench/results/smpi/graph_raw.txt]
#        [--variants linear,pairing,cumulative,grid,gridN,auto,auto-LIST] [--bin-dir DIR]   (auto-LIST: auto with Info cartplan_auto_candidates=LIST, e.g. auto-all)
#        [--collectives default|logp]
#
# The rank count is the graph's (`cartplan graph explain` reports it; Moore graphs with holes have
# fewer ranks than cells). --model: the cost model auto prices with (CARTPLAN_COST_MODEL); default
# the platform's calibration bench/results/smpi/cost_model_<platform>_p256.json (p64 below 256
# ranks), else builtin. --limit: stop after SECONDS of wall time (the run is logged as such).
# --bin-dir: take cartplan and graph_scale_bench (SMPI build) from DIR instead of building them
# (bench/smpi/graph_points/run.sh builds once and copies them there, so that the sweep never
# waits for Bazel while other builds run).
# --collectives: the algorithms of the global collectives that set-up and the bench's barriers
# call (per call, cartplan calls none). default: SMPI's own, a root that talks to every rank in
# turn (linear in p: 3.2 ms per MPI_Allreduce at p = 4096 on the fat tree). logp: Open MPI's
# small-message choices (bench/smpi/logp_collectives.sh), what they cost on a cluster.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

platform="" graph="" ops="allgather" bytes=4 iters=3 reps=2 theta=4 model="" limit="" out="bench/results/smpi/graph_raw.txt" bindir="" variants=""
collectives=default
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || { echo "graph_sweep.sh: $1 needs a value" >&2; exit 2; }
  case "$1" in
    --platform) platform=$2 ;; --graph) graph=$2 ;; --ops) ops=$2 ;; --bytes) bytes=$2 ;; --iters) iters=$2 ;; --reps) reps=$2 ;;
    --theta) theta=$2 ;; --model) model=$2 ;; --limit) limit=$2 ;; --out) out=$2 ;; --bin-dir) bindir=$2 ;; --variants) variants=$2 ;;
    --collectives) collectives=$2 ;;
    *) echo "graph_sweep.sh: unknown option $1 (see the header of bench/smpi/graph_sweep.sh)" >&2; exit 2 ;;
  esac
  shift 2
done
[ -n "$platform" ] && [ -n "$graph" ] || { echo "graph_sweep.sh: --platform and --graph are required" >&2; exit 2; }
case "$collectives" in
  default) coll=() ;;
  logp) source bench/smpi/logp_collectives.sh; coll=("${logp_collectives[@]}") ;;
  *) echo "graph_sweep.sh: --collectives must be default or logp, not $collectives" >&2; exit 2 ;;
esac

if [ -n "$bindir" ]; then
  cartplan="$bindir/cartplan" bin="$bindir/graph_scale_bench"
else
  bazel build --ui_event_filters=-info,-stdout,-stderr --noshow_progress //tools:cartplan
  bazel build --config=smpi --ui_event_filters=-info,-stdout,-stderr --noshow_progress //bench:graph_scale_bench
  cartplan="$(bazel info bazel-bin 2>/dev/null)/tools/cartplan"
  bin="$(bazel info --config=smpi bazel-bin 2>/dev/null)/bench/graph_scale_bench"
fi
np="$("$cartplan" graph explain --graph "$graph" --op allgather --algo linear --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["ranks"])')"
if [ -z "$model" ]; then
  model=builtin
  calib="bench/results/smpi/cost_model_${platform}_p$([ "$np" -ge 256 ] && echo 256 || echo 64).json"
  [ -f "$calib" ] && model="$calib"
fi
[ "$model" = builtin ] || [ -f "$model" ] || { echo "graph_sweep.sh: --model $model does not exist" >&2; exit 2; }

plat="$root/out/smpi/platforms"
mkdir -p "$plat" "$(dirname "$out")"
python3 bench/smpi/platforms.py "$platform" --np "$np" --out-dir "$plat" >/dev/null
command="bash bench/smpi/graph_sweep.sh --platform $platform --graph $graph --ops $ops --bytes $bytes --iters $iters --reps $reps --theta $theta --model $model"
extra=()
[ -z "$variants" ] || { extra=(--variants "$variants"); command+=" --variants $variants"; }
[ "$collectives" = default ] || command+=" --collectives $collectives"
env=()
[ "$model" = builtin ] || env=(CARTPLAN_COST_MODEL="$root/$model")
limiter=()
[ -z "$limit" ] || limiter=(timeout -k 30 "$limit")
tmp="$(mktemp)"
trap 'rm -f "$tmp"' EXIT
start=$(date +%s) status=0
env "${env[@]}" "${limiter[@]}" smpirun --log=xbt_cfg.thres:warning --log=smpi_config.thres:warning "${coll[@]}" -np "$np" \
  -platform "$plat/${platform}_p${np}.xml" -hostfile "$plat/${platform}_p${np}.hosts" "$bin" \
  --graph "$graph" --ops "$ops" --bytes "$bytes" --iters "$iters" --reps "$reps" --theta "$theta" "${extra[@]}" >"$tmp" 2>&1 || status=$?
wall=$(($(date +%s) - start))
verdict=ok
[ "$status" = 0 ] || verdict="exit $status"
{ [ "$status" = 124 ] || [ "$status" = 137 ]; } && verdict="did not finish within $limit s"
{ echo "## $command  (platform $platform, np $np; $wall s wall; $verdict)"; grep -v '^\[' "$tmp" || true; echo; } >>"$out"
echo "$(date -u +%FT%TZ) $platform np=$np $graph $ops $bytes: $wall s wall, $verdict" >>"${out%.txt}_wall.log"
echo "graph_sweep.sh: $platform np=$np $graph $ops $bytes B: $wall s wall, $verdict -> $out"
[ "$status" = 0 ]
