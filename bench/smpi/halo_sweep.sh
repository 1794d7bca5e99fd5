#!/usr/bin/env bash
# Issue 33's halo measurements under SMPI: tools/halo (every variant: the halo API's auto, blocking
# and forced plans, Cart_alltoallw's plans, the hand-written dimension-by-dimension exchange, the
# linear loop) at NP ranks on the three platforms, 2-D and 3-D, ghost width 1 and 3, local n 8,
# 64 and 256 (2-D only: a 3-D n = 256 array is 134 MB per rank, and rank 0 checks a 1024^3
# serial run), cheapest points first, one simulation at a time (bench/smpi/halo_scale.sh, which
# logs each run to bench/results/smpi/scale_log.md). Builds the SMPI flavour once; STOP (HH:MM,
# UTC) is when no new simulation starts; POINTS (D:N:K ..., e.g. "2:64:1 2:256:1") replaces the
# default list and order. Tabulate with bench/smpi/halo_table.py.
#   bash bench/smpi/halo_sweep.sh NP [STOP] [LIMIT_S] [POINTS]
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
np=$1 stop=${2:-} limit=${3:-400} points=${4:-}
if [ -z "$points" ]; then
  for n in 8 64 256; do
    for d in 2 3; do
      [ "$d" = 3 ] && [ "$n" = 256 ] && continue
      for k in 1 3; do points="$points $d:$n:$k"; done
    done
  done
fi
bazel build --config=smpi --ui_event_filters=-info,-stdout,-stderr --noshow_progress //tools:halo || exit 1
# A copy of the binary: later builds of either flavour move bazel-bin, not this.
bin_dir="$(mktemp -d "${TMPDIR:-/tmp}/halo_sweep.XXXXXX")"
mkdir -p "$bin_dir/tools"
cp "$(bazel info --config=smpi bazel-bin 2>/dev/null)/tools/halo" "$bin_dir/tools/halo"
for point in $points; do
  IFS=: read -r d n k <<<"$point"
  for pl in fattree torus dragonfly; do
    if [ -n "$stop" ] && [ "$(date -u +%H:%M)" \> "$stop" ]; then echo "halo_sweep: $stop passed, not starting $pl d=$d n=$n k=$k"; continue; fi
    echo "halo_sweep: $(date -u +%H:%M:%S) $pl p=$np d=$d n=$n k=$k"
    DIMS=$d HALO_BIN_DIR="$bin_dir" bash bench/smpi/halo_scale.sh "$pl" "$np" "$n" "$k" "$limit"
  done
done
rm -rf "$bin_dir"
