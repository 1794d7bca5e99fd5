#!/usr/bin/env bash
# The scale note's measurements: exchange time on grids where every shift reaches another process
# (np = 8 as a 2x2x2 torus, an 8-ring and a 4x2 torus), and the np = 2 deep halos where log-round
# candidates exist, each optimizer candidate measured next to the model's prediction. Writes
# scale_np8.csv, scale_np8.txt (raw output, commands, load) and scale_np8.md to
# bench/results/<machine-tag>/ (or $OUT).
#
#   bash bench/scale.sh                                     # REPS=30 WARMUP=5 (the lead's run)
#   REPS=3 WARMUP=1 OUT=/tmp/scale bash bench/scale.sh      # smoke run
#
# Environment: REPS, WARMUP, MIN_MS (repeat a point until its timed repetitions take this many
# ms, at most 1000 repetitions; default 200), MS (block sizes in ints, default 1,100), OUT, CARTPLAN_MACHINE_TAG,
# COST_MODEL (one file for every run; set it empty for the model the backend locates itself,
# whose built-in defaults price a phase as a context switch when ranks outnumber cores). By
# default each process count uses a model calibrated for it: the tag's cost_model.json at
# np = 2 (bench/run.sh) and cost_model_np8.json at np = 8, calibrated here (full mode) unless
# it exists.
set -euo pipefail

reps="${REPS:-30}"
warmup="${WARMUP:-5}"
ms="${MS:-1,100}"
min_ms="${MIN_MS:-200}"
for v in "$reps" "$warmup" "$min_ms"; do
  [[ "$v" =~ ^[0-9]+$ ]] || { echo "scale.sh: REPS, WARMUP and MIN_MS must be non-negative integers, not '$v'" >&2; exit 2; }
done
[ "$reps" -ge 1 ] || { echo "scale.sh: REPS must be at least 1" >&2; exit 2; }

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
tag="${CARTPLAN_MACHINE_TAG:-cpp-2core}"
out="${OUT:-bench/results/$tag}"
per_np=1
[ -n "${COST_MODEL+set}" ] && per_np=0
model="${COST_MODEL:-}"
mkdir -p "$out"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

bazel build -c opt //bench:exchange_bench //bench:calibrate >"$tmp/build.log" 2>&1 || { tail -n 40 "$tmp/build.log" >&2; echo "scale.sh: build failed" >&2; exit 1; }
# A copy: Bazel is shared, another build could replace the binary while we measure.
bin="$(bazel info -c opt bazel-bin 2>/dev/null)/bench"
cp "$bin/exchange_bench" "$bin/calibrate" "$tmp/"

common=(--candidates --m "$ms" --ops alltoall,allgather --reps "$reps" --warmup "$warmup" --min-ms "$min_ms")
if [ "$per_np" = 0 ] && [ -n "$model" ]; then
  [ -f "$model" ] || { echo "scale.sh: cost model '$model' does not exist (set COST_MODEL= for the located one)" >&2; exit 2; }
fi
# The model for a process count (see Environment above).
model_for() {
  local np=$1
  if [ "$per_np" = 0 ]; then echo "$model"; return; fi
  local model_file="$out/cost_model_np$np.json"
  [ "$np" = 2 ] && model_file="$out/cost_model.json"
  if [ ! -f "$model_file" ]; then
    echo "scale.sh: calibrating at np = $np -> $model_file" >&2
    mpirun --allow-run-as-root --oversubscribe --mca mpi_yield_when_idle 1 -np "$np" "$tmp/calibrate" --out "$model_file" >&2
  fi
  echo "$model_file"
}

txt="$out/scale_np8.txt"
{
  echo "date: $(date -u '+%Y-%m-%dT%H:%M:%SZ')"
  echo "git: $(git rev-parse HEAD 2>/dev/null || echo unknown)$([ -n "$(git status --porcelain 2>/dev/null)" ] && echo ' (uncommitted changes)')"
  echo "nproc: $(nproc); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "open mpi: $(mpirun --version 2>/dev/null | head -n 1); --oversubscribe, mpi_yield_when_idle 1"
  if [ "$per_np" = 1 ]; then echo "cost model: calibrated per process count (cost_model.json at np = 2, cost_model_np8.json at np = 8)"
  else echo "cost model: ${model:-located by the backend}"; fi
} >"$txt"

# np = 8 on 2 cores is oversubscribed: waiting ranks must yield the core instead of spinning.
run() {
  local name=$1 np=$2
  shift 2
  local m
  m="$(model_for "$np")"
  local with=("${common[@]}")
  [ -n "$m" ] && with+=(--cost-model "$m")
  # %q: the command as it can be pasted back (the offsets spec has semicolons).
  echo "mpirun -np $np exchange_bench $(printf '%q ' "$@" "${with[@]}")" | tee -a "$txt"
  mpirun --allow-run-as-root --oversubscribe --mca mpi_yield_when_idle 1 -np "$np" \
    "$tmp/exchange_bench" "$@" "${with[@]}" --csv "$tmp/$name.csv" >>"$txt"
}
# Every shift of these neighbourhoods leads to another process (none wraps to itself), so the
# plans' rounds are all real messages, unlike np = 2 where most combining rounds are copies.
run torus3 8 --dims 2,2,2 --stencil box:d=3,n=3,f=-1
run ring 8 --dims 8 --stencil 'offsets:1;2;3;-1;-2;-3'
# On 4x2 the shifts of +-2 along the second dimension (chebyshev depth 2) wrap to the process.
run torus2 8 --dims 4,2 --stencil box:d=2,n=3,f=-1 --stencil chebyshev:d=2,depth=2
# np = 2 deep halos (t = 80): log-round candidates exist here; does log-round beat the others?
run deep 2 --stencil chebyshev:d=2,depth=4 --stencil box:d=2,n=9,f=-4
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$txt"

# One CSV: the header once, then every run's rows.
head -n 1 "$tmp/torus3.csv" >"$out/scale_np8.csv"
for name in torus3 ring torus2 deep; do tail -n +2 "$tmp/$name.csv" >>"$out/scale_np8.csv"; done
python3 bench/candidates_table.py --scale "$out/scale_np8.csv" >"$out/scale_np8.md"
# Auto's misses measured again alone, 200 repetitions under three seeds, with the same models.
confirm_models=()
for np in $(tail -n +2 "$out/scale_np8.csv" | cut -d, -f1 | sort -u); do
  m="$(model_for "$np")"
  [ -n "$m" ] && confirm_models+=(--cost-model "$np=$m")
done
if [ "${#confirm_models[@]}" -gt 0 ]; then
  python3 bench/confirm_misses.py --exchange-bench "$tmp/exchange_bench" "${confirm_models[@]}" \
    --csv "$out/confirm_scale_np8.csv" "$out/scale_np8.csv" >"$out/confirm_scale_np8.md"
  echo "scale.sh: wrote $out/confirm_scale_np8.md"
fi
echo "scale.sh: wrote $out/scale_np8.csv, $out/scale_np8.txt, $out/scale_np8.md"
