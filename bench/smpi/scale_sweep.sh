#!/usr/bin/env bash
# Sweeps at scale (issue 30) on one platform and p: optionally calibrate there first (bench/calibrate,
# installed as cartplan-calibrate, under smpirun, as first_run.sh does), then collective_bench
# points with that platform's model through bench/smpi/sweep.sh, one simulation per block size,
# so that a point that runs over its wall-time limit loses only itself. One simulation at a time
# (SimGrid's wall time grows faster than p; docs/smpi.md, "Wall time"). Every step, its wall time
# and whether it finished go to bench/results/smpi/scale_log.md.
#
#   bash bench/smpi/scale_sweep.sh --platform dragonfly --np 256 [--calibrate "--quick"] \
#        [--model-file FILE] [--measure sync|b2b] [--limit 600] [--iters 2] [--warmup 1] [--out bench/results/smpi/sweep_p256.md] < POINTS
#
# POINTS: one point set a line, "STENCIL OP M[,M...]" (e.g. "box:d=3,n=3,f=-1 alltoall 1,10,100").
# --model-file FILE: plan with this model instead of the platform's cost_model_<platform>_p<np>.json.
# STOP_AT (environment, seconds since the epoch): start no step after it (logged as skipped).
# --calibrate ARGS: run calibrate with ARGS ("" for its defaults) and write
# bench/results/smpi/cost_model_<platform>_p<np>.json and calibrate_<platform>_p<np>.txt.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

platform="" np="" model_file="" measure=sync calibrate="" do_calibrate=0 limit=600 iters=2 warmup=1 out=""
variants="linear,cart_auto_persistent,cart_auto_blocking,cart_direct_persistent,cart_combining_persistent,cart_hybrid_persistent,cart_loground_persistent"
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || { echo "scale_sweep.sh: $1 needs a value" >&2; exit 2; }
  case "$1" in
    --platform) platform=$2 ;; --np) np=$2 ;; --calibrate) calibrate=$2 do_calibrate=1 ;; --limit) limit=$2 ;;
    --iters) iters=$2 ;; --warmup) warmup=$2 ;; --out) out=$2 ;; --variants) variants=$2 ;; --model-file) model_file=$2 ;; --measure) measure=$2 ;;
    *) echo "scale_sweep.sh: unknown option $1 (see the header of bench/smpi/scale_sweep.sh)" >&2; exit 2 ;;
  esac
  shift 2
done
[ -n "$platform" ] && [ -n "$np" ] || { echo "scale_sweep.sh: --platform and --np are required" >&2; exit 2; }
results=bench/results/smpi
out="${out:-$results/sweep_p${np}.md}"
log="$results/scale_log.md"
[ -s "$log" ] || printf '| UTC start | step | wall s | status |\n|---|---|---|---|\n' >"$log"
late() { [ -n "${STOP_AT:-}" ] && [ "$(date +%s)" -ge "$STOP_AT" ]; }
note() { printf '| %s | %s | %s | %s |\n' "$1" "$2" "$3" "$4" >>"$log"; }

bazel build --config=smpi --ui_event_filters=-info,-stdout,-stderr --noshow_progress //bench:calibrate //bench:collective_bench
bin="$(bazel info --config=smpi bazel-bin 2>/dev/null)"
python3 bench/smpi/platforms.py "$platform" --np "$np" --out-dir out/smpi/platforms >/dev/null
plat=(-platform "out/smpi/platforms/${platform}_p${np}.xml" -hostfile "out/smpi/platforms/${platform}_p${np}.hosts")
model="${model_file:-$results/cost_model_${platform}_p${np}.json}"

if [ "$do_calibrate" = 1 ] && late; then
  note "$(date -u +%H:%M:%S)" "calibrate $platform p=$np $calibrate" 0 "skipped (out of time)"
elif [ "$do_calibrate" = 1 ]; then
  begin=$(date -u +%H:%M:%S) t0=$(date +%s) status=0
  # shellcheck disable=SC2086  # $calibrate is a list of options
  { echo "# python3 bench/smpi/platforms.py $platform --np $np --out-dir out/smpi/platforms"
    echo "# smpirun -np $np ${plat[*]} \$(bazel info --config=smpi bazel-bin)/bench/calibrate --out $model $calibrate"
    timeout -k 30 "$limit" smpirun --log=xbt_cfg.thres:warning --log=smpi_config.thres:warning -np "$np" "${plat[@]}" \
      "$bin/bench/calibrate" --out "$model" $calibrate || status=$?; } >"$results/calibrate_${platform}_p${np}.txt" 2>&1
  if [ "$status" = 0 ]; then
    note "$begin" "calibrate $platform p=$np $calibrate" $(($(date +%s) - t0)) done
  else
    note "$begin" "calibrate $platform p=$np $calibrate" $(($(date +%s) - t0)) "DID NOT FINISH (status $status, limit $limit s)"
    rm -f "$model"
  fi
fi
[ -f "$model" ] || { echo "scale_sweep.sh: no model $model; sweeping with the built-in one" >&2; model=builtin; }

while read -r stencil op ms; do
  [ -n "${stencil:-}" ] && [ "${stencil:0:1}" != "#" ] || continue
  for m in ${ms//,/ }; do
    if late; then note "$(date -u +%H:%M:%S)" "$platform p=$np $stencil $op m=$m" 0 "skipped (out of time)"; continue; fi
    begin=$(date -u +%H:%M:%S) t0=$(date +%s) status=0
    bash bench/smpi/sweep.sh --platform "$platform" --np "$np" --stencil "$stencil" --op "$op" --m "$m" --iters "$iters" \
      --warmup "$warmup" --model "$model" --variants "$variants" --limit "$limit" --measure "$measure" --out "$out" </dev/null || status=$?
    if [ "$status" = 0 ]; then
      note "$begin" "$platform p=$np $stencil $op m=$m" $(($(date +%s) - t0)) done
    else
      note "$begin" "$platform p=$np $stencil $op m=$m" $(($(date +%s) - t0)) "DID NOT FINISH (status $status, limit $limit s)"
    fi
  done
done
