#!/usr/bin/env bash
# Runs every point of a points file (one line of bench/smpi/graph_sweep.sh arguments each, '#'
# comments skipped) one after another; a point that fails or times out is logged and the next runs.
#
#   nohup bash bench/smpi/graph_points/run.sh bench/smpi/graph_points/p256.txt [--limit SECONDS] > /tmp/p256.log 2>&1 &
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
points="$1"
shift
cd "$root"
bazel build --ui_event_filters=-info,-stdout,-stderr --noshow_progress //tools:cartplan || exit 1
bazel build --config=smpi --ui_event_filters=-info,-stdout,-stderr --noshow_progress //bench:graph_scale_bench || exit 1
bindir="$root/out/smpi/bin/$(basename "$points" .txt)"
mkdir -p "$bindir"
cp -f "$(bazel info bazel-bin 2>/dev/null)/tools/cartplan" "$(bazel info --config=smpi bazel-bin 2>/dev/null)/bench/graph_scale_bench" "$bindir/"
while IFS= read -r line; do
  case "$line" in ''|'#'*) continue ;; esac
  # shellcheck disable=SC2086
  bash "$root/bench/smpi/graph_sweep.sh" $line --bin-dir "$bindir" "$@" || echo "graph_points/run.sh: point failed: $line"
done <"$points"
