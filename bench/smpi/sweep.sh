#!/usr/bin/env bash
# One sweep point set under SimGrid's SMPI: builds the platform and hostfile for p ranks
# (bench/smpi/platforms.py), runs bench/collective_bench (SMPI build) under smpirun, keeps its raw
# output and appends one markdown row per block size to a table, each row with the command that
# reproduces it (bench/smpi/sweep_table.py). docs/smpi.md explains the platforms and the timing.
#
#   bash bench/smpi/sweep.sh --platform torus --np 64 --stencil box:d=3,n=3,f=-1 --op alltoall --m 1,10,100
#        [--model FILE|builtin] [--iters 10] [--warmup 2] [--variants NAME,NAME] [--limit SECONDS] [--measure sync|b2b] [--out bench/results/smpi/sweep.md]
#
# --model: the cost model auto plans with (a cartplan-calibrate file for this platform and p, passed
# as the Info key cartplan_cost_model), or "builtin" for the built-in defaults. Default: the file
# bench/results/smpi/cost_model_<platform>_p<np>.json if it exists, else builtin.
# --variants: only these collective_bench variants (default: all twelve). The table needs linear,
# cart_auto_persistent, cart_auto_blocking and at least one candidate; at p >= 256 leaving out the
# other blocking forms and linear_persistent saves wall time (SimGrid's cost grows faster than p).
# --measure: the table's measured times, sync (default) or back to back (docs/smpi.md, "Timing").
# --limit: stop the simulation after SECONDS of wall time; the rows it finished are kept in the raw
# file under a "did not finish" heading, none go to the table, and the exit status is timeout's (124).
# The raw output goes to OUT with .md replaced by .txt (appended, headed by the command).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

platform="" np="" stencil="" op="alltoall" ms="1,10,100" model="" iters=10 warmup=2 variants="" limit="" measure=sync out="bench/results/smpi/sweep.md"
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || { echo "sweep.sh: $1 needs a value" >&2; exit 2; }
  case "$1" in
    --platform) platform=$2 ;; --np) np=$2 ;; --stencil) stencil=$2 ;; --op) op=$2 ;; --m) ms=$2 ;;
    --model) model=$2 ;; --iters) iters=$2 ;; --warmup) warmup=$2 ;; --variants) variants=$2 ;; --limit) limit=$2 ;; --measure) measure=$2 ;; --out) out=$2 ;;
    *) echo "sweep.sh: unknown option $1 (see the header of bench/smpi/sweep.sh)" >&2; exit 2 ;;
  esac
  shift 2
done
[ -n "$platform" ] && [ -n "$np" ] && [ -n "$stencil" ] || { echo "sweep.sh: --platform, --np and --stencil are required" >&2; exit 2; }
if [ -z "$model" ]; then
  model=builtin
  [ -f "bench/results/smpi/cost_model_${platform}_p${np}.json" ] && model="bench/results/smpi/cost_model_${platform}_p${np}.json"
fi
[ "$model" = builtin ] || [ -f "$model" ] || { echo "sweep.sh: --model $model does not exist" >&2; exit 2; }

bazel build --config=smpi --ui_event_filters=-info,-stdout,-stderr --noshow_progress //bench:collective_bench
bin="$(bazel info --config=smpi bazel-bin 2>/dev/null)"
plat="$root/out/smpi/platforms"
mkdir -p "$plat" "$(dirname "$out")"
python3 bench/smpi/platforms.py "$platform" --np "$np" --out-dir "$plat" >/dev/null

args=(--stencil "$stencil" --op "$op" --m "$ms" --iters "$iters" --warmup "$warmup")
[ "$model" = builtin ] || args+=(--cost-model "$model")
[ -z "$variants" ] || args+=(--variants "$variants")
command="bash bench/smpi/sweep.sh --platform $platform --np $np --stencil $stencil --op $op --m \"\$M\" --iters $iters --warmup $warmup --model $model"
[ -z "$variants" ] || command+=" --variants $variants"
[ "$measure" = sync ] || command+=" --measure $measure"
raw="${out%.md}.txt"
tmp="$(mktemp)"
trap 'rm -f "$tmp"' EXIT
start=$(date +%s) status=0
limiter=()
[ -z "$limit" ] || limiter=(timeout -k 30 "$limit")  # smpirun passes the TERM on to the simulation
"${limiter[@]}" smpirun --log=xbt_cfg.thres:warning --log=smpi_config.thres:warning -np "$np" \
  -platform "$plat/${platform}_p${np}.xml" -hostfile "$plat/${platform}_p${np}.hosts" "$bin/bench/collective_bench" "${args[@]}" >"$tmp" || status=$?
if [ "$status" = 124 ] || [ "$status" = 137 ] || [ "$status" = 143 ]; then
  { echo "## $command  (M=$ms; DID NOT FINISH: stopped after $(($(date +%s) - start)) s wall, limit $limit s; rows it finished:)"; cat "$tmp"; } >>"$raw"
  echo "sweep.sh: $platform p=$np $stencil $op m=$ms did not finish within $limit s (raw rows in $raw)" >&2
  exit 124
fi
{ echo "## $command  (M=$ms; $(($(date +%s) - start)) s wall)"; cat "$tmp"; } >>"$raw"
python3 bench/smpi/sweep_table.py --platform "$platform" --model "$model" --command "$command" --measure "$measure" --out "$out" <"$tmp"
echo "sweep.sh: $(grep -vc '^#' "$tmp") variant rows of $platform p=$np $stencil $op m=$ms -> $out ($raw)"
