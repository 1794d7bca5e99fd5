#!/usr/bin/env bash
# Runs the unchanged standard-API program bench/stencil_program at np=2 with and without
# LD_PRELOAD=libcartplan_interpose.so, alternating, for 3-D and 4-D Moore radius 1 (26 and 80
# neighbours) and blocks of 1 byte to 64 KiB, and writes bench/results/<tag>/interpose.csv (every
# run), interpose_summary.md (medians and ratios, targets at 1..64 bytes) and interpose_*.png
# plots (if gnuplot is installed).
#
#   bash bench/interpose_run.sh              # 5 alternating pairs per configuration
#   bash bench/interpose_run.sh --pairs 3
#   bash bench/interpose_run.sh --baseline OLD/libcartplan_interpose.so
# --baseline: a third mode in every alternation, the given (earlier) build of the library, so the
# blocking path before and after a change is compared in the same run (interpose_summary.md then
# has a "baseline us" column and the ratio of this build to it).
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=5
baseline=""
while [ $# -gt 0 ]; do
  case "$1" in
    --pairs) pairs=$2; shift 2 ;;
    --baseline) baseline=$(realpath "$2"); shift 2 ;;
    *) echo "interpose_run.sh: unknown argument '$1' (--pairs N, --baseline LIB)" >&2; exit 2 ;;
  esac
done
tag=${CARTPLAN_MACHINE_TAG:-cpp-2core}
out=bench/results/$tag
mkdir -p "$out"
bazel build //bench:stencil_program //backends/interpose:libcartplan_interpose.so >/dev/null 2>&1
# Copies, so that a rebuild during the run cannot change what is measured.
bin_dir=$(mktemp -d)
trap 'rm -rf "$bin_dir"' EXIT
cp bazel-bin/bench/stencil_program bazel-bin/backends/interpose/libcartplan_interpose.so "$bin_dir"/
prog=$bin_dir/stencil_program
lib=$bin_dir/libcartplan_interpose.so
modes="openmpi cartplan"
[ -n "$baseline" ] && modes="openmpi baseline cartplan"
# Transports as in tests/mpi/run_mpi.sh. Two ranks on two cores are not oversubscribed, so ranks
# busy-poll as Open MPI does by default (yield_when_idle=0); the tests yield because they
# oversubscribe. Both modes of every pair run with the same settings.
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_mpi_yield_when_idle=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
sizes=1,2,4,8,16,32,64,256,1024,4096,16384,65536
csv=$out/interpose.csv
echo "d,r,pair,mode,op,bytes,median_us,mean_us" > "$csv"
for d in 3 4; do
  for ((i = 0; i < pairs; ++i)); do
    for mode in $modes; do
      pre=()
      [ "$mode" = cartplan ] && pre=(-x LD_PRELOAD="$lib")
      [ "$mode" = baseline ] && pre=(-x LD_PRELOAD="$baseline")
      mpirun --oversubscribe --allow-run-as-root -np 2 "${pre[@]}" "$prog" --d "$d" --r 1 --sizes "$sizes" --iterations 1000 |
        awk -v d="$d" -v i="$i" -v m="$mode" '$1 == "ERRORS" { print "wrong data: " $0 > "/dev/stderr"; exit 1 } { print d ",1," i "," m "," $1 "," $2 "," $3 "," $4 }' >> "$csv"
    done
  done
done
python3 - "$csv" "$out" <<'PY'
import csv, statistics, sys, collections
rows = list(csv.DictReader(open(sys.argv[1])))
out = sys.argv[2]
t = collections.defaultdict(list)
for r in rows:
    t[(int(r["d"]), r["op"], int(r["bytes"]), r["mode"])].append(float(r["median_us"]))
has_base = any(k[3] == "baseline" for k in t)
lines = ["# Drop-in acceleration: unchanged MPI program, np=2, Moore radius 1, blocking calls",
         "", "Medians over alternating runs (bench/interpose_run.sh) of each run's median over 1000 iterations",
         "(100 above 4 KiB) of the slowest rank's time per call, with a barrier between calls.",
         "interpose.csv also has each run's mean." + (" baseline: the earlier build given with --baseline,"
         " in the same alternation; this / baseline is this build's time over it." if has_base else ""), "",
         "| d | neighbours | op | bytes | Open MPI us | preload us | ratio |" + (" baseline us | this / baseline |" if has_base else ""),
         "|---|---|---|---|---|---|---|" + ("---|---|" if has_base else "")]
targets = {3: 2.5, 4: 6.0}
worst = {}
for d in (3, 4):
    for op in ("alltoall", "allgather"):
        pts = []
        for b in sorted({k[2] for k in t if k[0] == d and k[1] == op}):
            o = statistics.median(t[(d, op, b, "openmpi")]); c = statistics.median(t[(d, op, b, "cartplan")])
            row = f"| {d} | {3**d-1} | {op} | {b} | {o:.2f} | {c:.2f} | {o/c:.2f} |"
            if has_base:
                base = statistics.median(t[(d, op, b, "baseline")])
                row += f" {base:.2f} | {c/base:.2f} |"
            lines.append(row)
            pts.append((b, o, c))
            if b <= 64: worst[(d, op)] = min(worst.get((d, op), 1e9), o / c)
        with open(f"{out}/interpose_d{d}_{op}.dat", "w") as f:
            for b, o, c in pts: f.write(f"{b} {o} {c}\n")
lines += ["", "Smallest ratio at 1..64 bytes (targets: 2.5x for d=3, 6x for d=4):", ""]
for (d, op), w in sorted(worst.items()):
    lines.append(f"- d={d} {op}: {w:.2f}x ({'meets' if w >= targets[d] else 'misses'} the {targets[d]}x target)")
open(f"{out}/interpose_summary.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
if command -v gnuplot >/dev/null; then
  for d in 3 4; do
    for op in alltoall allgather; do
      gnuplot <<GP
set terminal png size 800,500 noenhanced
set output "$out/interpose_d${d}_${op}.png"
set title "MPI_Neighbor_${op}, d=${d} Moore r=1, np=2: Open MPI vs LD_PRELOAD cartplan"
set logscale xy
set xlabel "block bytes"
set ylabel "time per call (us)"
set key left top
plot "$out/interpose_d${d}_${op}.dat" using 1:2 with linespoints title "Open MPI", "" using 1:3 with linespoints title "cartplan preload"
GP
    done
  done
fi
