#!/usr/bin/env bash
# The main job's configurations (bench/results/SUMMARY.md, "Main job") with a cost model calibrated for each
# process count: calibrates once per np (bench/calibrate, full mode: quick fits at np = 4 gave a phase term of 0 in one of two runs), then runs tools/halo RUNS
# times per configuration with CARTPLAN_COST_MODEL set, and writes what auto chose, every
# variant's time, auto / best, pick / best (the choice alone: halo names the variant whose
# program auto runs) and auto / MPI_Neighbor_alltoallw to
# bench/results/<tag>/main_job.{txt,md} (the calibrated models: main_job_cost_model_np<P>.json). Without calibration (CALIBRATE=0) the backend uses the
# model it finds itself (built-in defaults, oversubscription-aware); CALIBRATE=reuse runs with
# the main_job_cost_model_np<P>.json files a previous run wrote (and writes main_job_reuse.*).
# TUNE=measure runs the halo with CARTPLAN_TUNE=measure (auto times its close candidates at init;
# docs/cost-model.md, "Measuring mode") and writes main_job_measure.{txt,md} instead.
#
#   bash bench/main_job.sh              # RUNS=3 per configuration
#   RUNS=5 CALIBRATE=0 ITERS=50 bash bench/main_job.sh
#   TUNE=measure CALIBRATE=reuse bash bench/main_job.sh
set -euo pipefail
cd "$(dirname "$0")/.."

runs="${RUNS:-3}"
# Timed exchanges per variant and run (halo --iters; halo's own default is 50): at 10-100 us per
# exchange on an oversubscribed node, 50 leave two requests of one program 5-10 % apart.
iters="${ITERS:-500}"
calibrate="${CALIBRATE:-1}"
tune="${TUNE:-model}"
case "$calibrate" in 0|1|reuse) ;; *) echo "main_job.sh: CALIBRATE must be 0, 1 or reuse, not '$calibrate'" >&2; exit 2 ;; esac
case "$tune" in model) suffix="" ;; measure) suffix="_measure" ;; *) echo "main_job.sh: TUNE must be model or measure, not '$tune'" >&2; exit 2 ;; esac
# A run with reused models does not overwrite the tables of the run that calibrated them.
[ "$calibrate" = reuse ] && [ "$tune" = model ] && suffix="_reuse"
tag="${CARTPLAN_MACHINE_TAG:-cpp-2core}"
out="bench/results/$tag"
mkdir -p "$out"
txt="$out/main_job$suffix.txt"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

bazel build -c opt --ui_event_filters=-info,-stdout,-stderr --noshow_progress //tools:halo //bench:calibrate
cp bazel-bin/tools/halo bazel-bin/bench/calibrate "$tmp/"
mpi() { local np=$1; shift; mpirun --oversubscribe --allow-run-as-root --mca mpi_yield_when_idle 1 -np "$np" "$@"; }

# np and halo arguments of each configuration (run.sh's default first).
configs=(
  "4|"
  "4|--periodic 1 --halo 2"
  "2|--dims 3 --n 16 --periodic 1"
  "6|--dims 3 --n 16 --periodic 1"
  "8|--dims 3 --n 16 --periodic 1 --halo 2"
)

{
  echo "# bash bench/main_job.sh (RUNS=$runs CALIBRATE=$calibrate TUNE=$tune ITERS=$iters), git $(git rev-parse --short HEAD), $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$txt"
md="$out/main_job$suffix.md"
{
  echo "| np | arguments | run | model | auto chose | auto | direct | combining | MPI_Neighbor_alltoallw | auto / best cartplan | pick / best | auto / MPI |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
} >"$md"

# Reads the halo program's table from stdin and appends one row to the markdown table.
parse="$(cat <<'EOF'
import sys
np_, args, run, model, md = sys.argv[1:6]
chose, twin, t = None, None, {}
for line in sys.stdin:
    if line.startswith("auto chose:"):
        chose = line.split(":", 1)[1].strip()
    if line.startswith("auto runs the program of:"):
        twin = line.split(":", 1)[1].strip()
    # Rows: the variant in 24 columns, then algorithm, us/exchange, predicted us and check.
    name = line[:24].strip()
    if name in ("cartplan auto", "cartplan direct", "cartplan combining", "MPI_Neighbor_alltoallw"):
        t[name] = float(line[24:].split()[1])
if len(t) != 4 or chose is None:
    sys.exit("main_job.sh: could not read the halo program's table")
best = min(t["cartplan direct"], t["cartplan combining"])
# When auto runs the program of direct or combining, the two are one choice timed twice: pick /
# best takes the faster of the two, and judges only the choice (auto / best adds the A/A spread).
pick = min(t["cartplan auto"], t[twin]) if twin in t else t["cartplan auto"]
with open(md, "a") as f:
    f.write(f"| {np_} | `{args or '(default)'}` | {run} | {model} | {chose} | {t['cartplan auto']:.2f} | {t['cartplan direct']:.2f} | "
            f"{t['cartplan combining']:.2f} | {t['MPI_Neighbor_alltoallw']:.2f} | {t['cartplan auto'] / best:.2f} | "
            f"{pick / best:.2f} | {t['cartplan auto'] / t['MPI_Neighbor_alltoallw']:.2f} |\n")
EOF
)"

declare -A calibrated
for config in "${configs[@]}"; do
  np="${config%%|*}"
  args="${config#*|}"
  model="found by the backend"
  env_model=(-x "CARTPLAN_TUNE=$tune")
  if [ "$calibrate" != 0 ]; then
    # Kept next to the tables, so that its choices can be replayed (cartplan plan --explain).
    model_file="$out/main_job_cost_model_np$np.json"
    if [ "$calibrate" = reuse ] && [ ! -f "$model_file" ]; then
      echo "main_job.sh: CALIBRATE=reuse but $model_file does not exist" >&2
      exit 2
    fi
    if [ "$calibrate" = 1 ] && [ -z "${calibrated[$np]:-}" ]; then
      echo "main_job.sh: calibrating at np = $np" >&2
      mpi "$np" "$tmp/calibrate" --out "$model_file" >>"$txt"
      calibrated[$np]=1
    fi
    env_model+=(-x "CARTPLAN_COST_MODEL=$model_file")
    model="calibrated np=$np"
  fi
  [ "$tune" = measure ] && model="$model, measured at init"
  for run in $(seq 1 "$runs"); do
    # shellcheck disable=SC2086
    text="$(mpi "$np" "${env_model[@]}" "$tmp/halo" $args --iters "$iters")"
    { echo "## np=$np $args run $run"; echo "$text"; } >>"$txt"
    printf '%s\n' "$text" | python3 -c "$parse" "$np" "$args" "$run" "$model" "$md"
  done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$txt"
echo "main_job.sh: wrote $md" >&2
cat "$md"
