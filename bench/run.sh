#!/usr/bin/env bash
# Builds and runs every cartplan benchmark and writes CSVs, env.txt, summary.md and plots to
# bench/results/<machine-tag>/: planning time, 4096-rank simulation, cost-model calibration,
# exchange time against Open MPI (np 2, 4, 8), the auto-selection check against every optimizer
# candidate, setup time and the 16384-rank scale simulation. See bench/README.md.
# (bench/scale.sh, the np = 8 grids where every shift reaches another process, runs separately.)
#
#   bash bench/run.sh            # full mode (tens of minutes)
#   bash bench/run.sh --quick    # quick mode (a few minutes)
#
# The machine tag is "cpp-2core" (the project's machine kind) unless CARTPLAN_MACHINE_TAG is set:
# hostnames of the workplace's machines change between sessions, results should not move.
set -euo pipefail

mode=full
for arg in "$@"; do
  case "$arg" in
    --quick) mode=quick ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument '$arg' (only --quick)" >&2; exit 2 ;;
  esac
done

box3="--stencil box:d=2,n=3,f=-1 --stencil box:d=3,n=3,f=-1 --stencil box:d=4,n=3,f=-1 --stencil box:d=5,n=3,f=-1"
# Deep 2-D halos (t = 80) where the optimizer has log-round candidates: does log-round beat
# direct and combining? The np = 2 sweep runs every candidate (--candidates).
deep="--stencil chebyshev:d=2,depth=4 --stencil box:d=2,n=9,f=-4"
if [ "$mode" = quick ]; then
  plan_args=(--reps 5 --warmup 1 --verify)
  sim_args=(--reps 1)
  calib_args=(--reps 60)
  ex2_args=($box3 --stencil box:d=3,n=4,f=-1 --stencil box:d=3,n=5,f=-1 $deep --candidates --m 1,10,100,1000 --reps 10 --warmup 2 --min-ms 200)
  exN_args=(--stencil box:d=2,n=3,f=-1 --stencil box:d=3,n=3,f=-1 --stencil box:d=4,n=3,f=-1 --m 1,100 --ops alltoall,allgather --reps 6 --warmup 2 --min-ms 200)
  auto_args=(--stencil box:d=2,n=3,f=-1 --stencil box:d=3,n=3,f=-1 --stencil box:d=4,n=3,f=-1 --m 1,16,128,1024,4096 --ops alltoall,allgather --reps 20 --warmup 2 --min-ms 200)
  setup_args=(--reps 8 --warmup 2)
  scale_args=(--p 16384 --max-gib 0.5 --m 1,100)
else
  plan_args=(--reps 31 --warmup 3 --verify)
  sim_args=(--reps 3)
  calib_args=(--reps 150)
  ex2_args=(--stencil box:d=2,n=3,f=-1 --stencil box:d=2,n=4,f=-1 --stencil box:d=2,n=5,f=-1
            --stencil box:d=3,n=3,f=-1 --stencil box:d=3,n=4,f=-1 --stencil box:d=3,n=5,f=-1
            --stencil box:d=4,n=3,f=-1 --stencil box:d=4,n=4,f=-1 --stencil box:d=4,n=5,f=-1
            --stencil box:d=5,n=3,f=-1 --stencil box:d=5,n=4,f=-1 --stencil box:d=5,n=5,f=-1
            $deep --candidates --m 1,10,100,1000 --reps 30 --warmup 5 --min-ms 500)
  exN_args=($box3 --m 1,10,100,1000 --reps 15 --warmup 3 --min-ms 500)
  auto_args=(--stencil box:d=2,n=3,f=-1 --stencil box:d=3,n=3,f=-1 --stencil box:d=4,n=3,f=-1 --stencil box:d=3,n=5,f=-1
             --m 1,2,4,8,16,32,64,128,256,512,1024,2048,4096,8192 --ops alltoall,allgather --reps 20 --warmup 3 --min-ms 500)
  setup_args=(--reps 30 --warmup 3)
  scale_args=(--p 16384)
fi

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
tag="${CARTPLAN_MACHINE_TAG:-cpp-2core}"
out="bench/results/$tag"
mkdir -p "$out"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

echo "run.sh: building (bazel build -c opt //bench:all)"
if ! bazel build -c opt //bench:all >"$tmp/build.log" 2>&1; then
  tail -n 40 "$tmp/build.log" >&2
  echo "run.sh: build failed" >&2
  exit 1
fi
# Copies, because Bazel is shared: another build could replace the outputs while we measure.
bin="$(bazel info -c opt bazel-bin 2>/dev/null)"
for b in plan_bench sim_bench calibrate exchange_bench setup_bench scale_sim; do cp "$bin/bench/$b" "$tmp/"; done
# Open MPI on this 2-core machine: np = 2 runs one rank per core; np = 4 and 8 oversubscribe,
# with waiting ranks yielding the core instead of spinning (otherwise they starve the others).
export OMPI_MCA_mpi_yield_when_idle=1
mpi() { local np=$1; shift; mpirun --allow-run-as-root --oversubscribe -np "$np" "$@"; }

bazel_version="$(bazel version 2>/dev/null | sed -n 's/^Build label: //p' || true)"
if [ -z "$bazel_version" ]; then
  # Debian's bazel-bootstrap answers "Version information not available"; its package knows.
  bazel_version="$(dpkg-query -W -f='${Package} ${Version}' bazel-bootstrap 2>/dev/null || echo unknown)"
fi
git_rev="$(git rev-parse HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git status --porcelain 2>/dev/null)" ]; then git_rev="$git_rev (work tree has uncommitted changes)"; fi
{
  echo "date: $(date -u '+%Y-%m-%dT%H:%M:%SZ')"
  echo "uname: $(uname -a)"
  echo "compiler: $(g++ --version | head -n 1)"
  echo "nproc: $(nproc)"
  echo "bazel: $bazel_version"
  echo "git: $git_rev"
  echo "mode: $mode"
  echo "command: bash bench/run.sh${*:+ $*}"
  echo "open mpi: $(mpirun --version 2>/dev/null | head -n 1); OMPI_MCA_mpi_yield_when_idle=1; np 4 and 8 with --oversubscribe"
  echo "plan_bench ${plan_args[*]} --csv plan_times.csv"
  echo "sim_bench ${sim_args[*]} --csv sim_times.csv"
  echo "mpirun -np 2 calibrate ${calib_args[*]} --out cost_model.json"
  echo "mpirun -np 2 exchange_bench ${ex2_args[*]} --cost-model cost_model.json --csv exchange_np2.csv"
  echo "mpirun -np 4|8 exchange_bench ${exN_args[*]} --cost-model cost_model.json --csv exchange_np4|8.csv"
  echo "mpirun -np 2 exchange_bench ${auto_args[*]} --no-blocking --only cart_ --candidates --cost-model cost_model.json --csv auto_np2.csv"
  echo "python3 bench/candidates_table.py auto_np2.csv > candidates_auto_np2.md"
  echo "python3 bench/candidates_table.py exchange_np2.csv > candidates_exchange_np2.md"
  echo "python3 bench/confirm_misses.py --exchange-bench exchange_bench --cost-model cost_model.json --csv confirm_auto_np2.csv auto_np2.csv > confirm_auto_np2.md"
  echo "python3 bench/confirm_misses.py --exchange-bench exchange_bench --cost-model cost_model.json --csv confirm_exchange_np2.csv exchange_np2.csv > confirm_exchange_np2.md"
  echo "bash bench/blocking.sh (REPS=30 quick, 100 full): see blocking_np2.cmd"
  echo "mpirun -np 2|4|8 setup_bench ${setup_args[*]} --csv setup_np2|4|8.csv"
  echo "scale_sim ${scale_args[*]} --cost-model cost_model.json --csv scale_sim.csv"
} >"$out/env.txt"

echo "run.sh: planning benchmark (${plan_args[*]})"
"$tmp/plan_bench" "${plan_args[@]}" --csv "$out/plan_times.csv" 2>"$tmp/plan.err" || {
  cat "$tmp/plan.err" >&2; exit 1; }
echo "run.sh: simulation benchmark (${sim_args[*]})"
"$tmp/sim_bench" "${sim_args[@]}" --csv "$out/sim_times.csv"

echo "run.sh: cost-model calibration (np = 2)"
mpi 2 "$tmp/calibrate" "${calib_args[@]}" --out "$out/cost_model.json" | tee "$out/calibrate.txt"
echo "run.sh: exchange time, np = 2"
mpi 2 "$tmp/exchange_bench" "${ex2_args[@]}" --cost-model "$out/cost_model.json" --csv "$out/exchange_np2.csv" >"$out/exchange_np2.txt"
for np in 4 8; do
  echo "run.sh: exchange time, np = $np (oversubscribed)"
  mpi "$np" "$tmp/exchange_bench" "${exN_args[@]}" --cost-model "$out/cost_model.json" --csv "$out/exchange_np$np.csv" >"$out/exchange_np$np.txt"
done
echo "run.sh: auto-selection sweep against every optimizer candidate, np = 2"
# --only cart_ keeps the cartplan variants; --candidates adds one request per optimizer
# candidate (cand:NAME, kept by --only), each with the model's prediction.
mpi 2 "$tmp/exchange_bench" "${auto_args[@]}" --no-blocking --only cart_ --candidates --cost-model "$out/cost_model.json" \
  --csv "$out/auto_np2.csv" >"$out/auto_np2.txt"
echo "run.sh: blocking and non-blocking targets, np = 2 (bench/blocking.sh)"
REPS="$([ "$mode" = quick ] && echo 30 || echo 100)" bash bench/blocking.sh >/dev/null
for np in 2 4 8; do
  echo "run.sh: setup time, np = $np"
  mpi "$np" "$tmp/setup_bench" "${setup_args[@]}" --csv "$out/setup_np$np.csv" >"$out/setup_np$np.txt"
done
echo "run.sh: scale by simulation (${scale_args[*]})"
"$tmp/scale_sim" "${scale_args[@]}" --cost-model "$out/cost_model.json" --csv "$out/scale_sim.csv" >"$out/scale_sim.txt"

# --- plot ---------------------------------------------------------------------------------------
if ! command -v gnuplot >/dev/null 2>&1; then
  sudo=""
  if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; fi
  if command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" -eq 0 ] || [ -n "$sudo" ]; }; then
    echo "run.sh: installing gnuplot-nox for the plot"
    # The package lists may be missing or stale on a fresh machine: update only if needed.
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends gnuplot-nox >"$tmp/apt.log" 2>&1 ||
      { $sudo apt-get update >>"$tmp/apt.log" 2>&1 &&
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends gnuplot-nox >>"$tmp/apt.log" 2>&1; } ||
      true
  fi
fi
python3 bench/analyze.py "$out" >/dev/null && echo "run.sh: wrote $out/summary.md"
# Two runs, two tables: the same point measured in different runs is not one sample.
python3 bench/candidates_table.py "$out/auto_np2.csv" >"$out/candidates_auto_np2.md" &&
  echo "run.sh: wrote $out/candidates_auto_np2.md"
python3 bench/candidates_table.py "$out/exchange_np2.csv" >"$out/candidates_exchange_np2.md" &&
  echo "run.sh: wrote $out/candidates_exchange_np2.md"
# Every point where auto missed the best candidate by more than 10 %, measured again alone with
# 200 repetitions under three seeds: is the miss a choice or the noise of one short run?
for sweep in auto exchange; do
  echo "run.sh: auto's misses of the $sweep sweep measured again (bench/confirm_misses.py)"
  python3 bench/confirm_misses.py --exchange-bench "$tmp/exchange_bench" --cost-model "$out/cost_model.json" \
    --csv "$out/confirm_${sweep}_np2.csv" "$out/${sweep}_np2.csv" >"$out/confirm_${sweep}_np2.md"
done
if ! command -v gnuplot >/dev/null 2>&1; then
  echo "run.sh: gnuplot is not available and could not be installed; skipping plan_times.png"
  echo "run.sh: results in $out/"
  exit 0
fi

# One data file per (op, variant), sorted by t so yerrorlines draws a curve, not a zigzag.
# CSV columns: 1 op, 4 t, 8 variant, 9 reps, 11 median, 12 q1, 13 q3.
tail -n +2 "$out/plan_times.csv" | sort -t, -k1,1 -k8,8 -k4,4n |
  awk -F, -v dir="$tmp" '{ f = dir "/" $1 "_" $8 ".dat"; print $4, $11, $12, $13 > f }'
reps="$(awk -F, 'NR == 2 { print $9 }' "$out/plan_times.csv")"
terminal="pngcairo size 1500,620 font 'sans,10'"
gnuplot -e 'set terminal' 2>&1 | grep -q pngcairo || terminal="png size 1500,620"

{
  echo "set terminal $terminal"
  echo "set output '$out/plan_times.png'"
  echo "set multiplot layout 1,2 title 'cartplan planning time vs t, box:d=2..5,n=3..5,f=-1 ($tag, $mode run, $reps reps; points: median, bars: quartiles)' noenhanced"
  echo "set logscale xy"
  echo "set format y '10^{%L}'"
  echo "set xlabel 't (non-zero offsets)'"
  echo "set ylabel 'time per call [us]'"
  echo "set grid xtics ytics mxtics mytics"
  echo "set key bottom right"
  echo "set xrange [6:4000]"
  echo "set yrange [1:30000]"
  for op in alltoall allgather; do
    echo "set title '$op'"
    plot="plot 5000 with lines dashtype 2 linecolor rgb 'red' title 'target 5 ms (t = 3124)'"
    # Fixed colours per variant in both panels; verify (not planning) dashed.
    for spec in "combining:#1b9e77:1:7" "direct:#377eb8:1:5" "auto:#d95f02:1:9" \
                "verify_combining:#1b9e77:3:6" "verify_direct:#377eb8:3:4"; do
      IFS=: read -r variant colour dash point <<<"$spec"
      f="$tmp/${op}_${variant}.dat"
      [ -s "$f" ] || continue
      plot="$plot, '$f' using 1:2:3:4 with yerrorlines linecolor rgb '$colour' dashtype $dash pointtype $point"
      plot="$plot pointsize 0.9 linewidth 1.5 title '$variant' noenhanced"
    done
    echo "$plot"
  done
  echo "unset multiplot"
} >"$tmp/plot.gp"
if gnuplot "$tmp/plot.gp" 2>"$tmp/gnuplot.err"; then
  echo "run.sh: wrote $out/plan_times.png"
else
  cat "$tmp/gnuplot.err" >&2
  echo "run.sh: gnuplot failed; no plot" >&2
fi
echo "run.sh: results in $out/"
