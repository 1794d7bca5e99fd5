#!/usr/bin/env bash
# Issue 33's halo measurements under SMPI: tools/halo (every variant: the halo API's auto, blocking
# and forced plans, Cart_alltoallw's plans, the hand-written dimension-by-dimension exchange, the
# linear loop) at NP ranks on the three platforms, 2-D and 3-D, ghost width 1 and 3, local n 8,
# 64 and 256, cheapest points first, one simulation at a time (bench/smpi/halo_scale.sh, which
# logs each run to bench/results/smpi/scale_log.md). Builds the SMPI flavour once; STOP (HH:MM,
# UTC) is when no new simulation starts; POINTS (D:N:K ..., e.g. "2:64:1 2:256:1") replaces the
# default list and order. Tabulate with bench/smpi/halo_table.py.
# SMPI runs every rank in this one process, so the data check follows memory (tools/halo --check):
# serial (Jacobi sweeps, rank 0 holds the global array three times over) while 4 x NP arrays fit
# in MEM_GB (default 12), else exchange (one exchange per variant, each rank checks its own
# cells: NP arrays) while NP arrays fit, else none (every rank's array one SMPI_SHARED_MALLOC
# block: simulated times only, the data unchecked; check that plan at a smaller NP). A 3-D n = 256
# array is 137-144 MB: exchange at NP = 64, none at NP = 256.
#   bash bench/smpi/halo_sweep.sh NP [STOP] [LIMIT_S] [POINTS]
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
np=$1 stop=${2:-} limit=${3:-400} points=${4:-}
mem_bytes=$(( ${MEM_GB:-12} * 1024 * 1024 * 1024 ))
if [ -z "$points" ]; then
  for n in 8 64 256; do
    for d in 2 3; do
      for k in 1 3; do points="$points $d:$n:$k"; done
    done
  done
fi
# The --check a point gets (see above): bytes of one rank's array of doubles with its ghosts.
check_for() {
  local d=$1 n=$2 k=$3 bytes=8 j
  for ((j = 0; j < d; ++j)); do bytes=$((bytes * (n + 2 * k))); done
  if [ $((4 * np * bytes)) -le "$mem_bytes" ]; then echo serial
  elif [ $((np * bytes)) -le "$mem_bytes" ]; then echo exchange
  else echo none; fi
}
bazel build --config=smpi --ui_event_filters=-info,-stdout,-stderr --noshow_progress //tools:halo || exit 1
# A copy of the binary: later builds of either flavour move bazel-bin, not this.
bin_dir="$(mktemp -d "${TMPDIR:-/tmp}/halo_sweep.XXXXXX")"
mkdir -p "$bin_dir/tools"
cp "$(bazel info --config=smpi bazel-bin 2>/dev/null)/tools/halo" "$bin_dir/tools/halo"
for point in $points; do
  IFS=: read -r d n k <<<"$point"
  for pl in fattree torus dragonfly; do
    if [ -n "$stop" ] && [ "$(date -u +%H:%M)" \> "$stop" ]; then echo "halo_sweep: $stop passed, not starting $pl d=$d n=$n k=$k"; continue; fi
    check=$(check_for "$d" "$n" "$k")
    echo "halo_sweep: $(date -u +%H:%M:%S) $pl p=$np d=$d n=$n k=$k check=$check"
    extra="${HALO_ARGS:-}"
    [ "$check" = serial ] || extra="$extra --check $check"
    DIMS=$d HALO_BIN_DIR="$bin_dir" HALO_ARGS="${extra# }" bash bench/smpi/halo_scale.sh "$pl" "$np" "$n" "$k" "$limit"
  done
done
rm -rf "$bin_dir"
