#!/usr/bin/env bash
# Issue 33's measurements on this machine: the main job (`bash run.sh`, 4 ranks) in its default
# configuration and README's other halo configurations, RUNS times each (runs of the
# configurations alternate, so a drifting load touches them alike), every variant in every run
# (the halo API's auto, blocking and forced plans, Cart_alltoallw's plans, the hand-written
# dimension-by-dimension exchange, the linear loop, MPI_Neighbor_alltoallw), each run's output
# with the time and load it ran at. The table: per variant the median of the runs' times, their
# range, the model's prediction and the bytes each rank sends (bench/smpi/halo_table.py --runs),
# and ratios taken within each run (the noise floor among them). ITERS (300) timed exchanges per
# variant and run instead of run.sh's 50: at the loads of this shared machine 50 leave the median
# of a run to a few descheduled exchanges.
#   bash bench/halo_local.sh [RUNS]   # -> bench/results/cpp-2core/halo_local.md, halo_local_runs/
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
runs=${1:-7}
iters=${ITERS:-300}
out=bench/results/cpp-2core
raw="$out/halo_local_runs"
mkdir -p "$raw"
configs=("default|" "d3_periodic|--dims 3 --periodic 1" "points5_k3|--points 5 --halo 3")
for r in $(seq 1 "$runs"); do
  for c in "${configs[@]}"; do
    name=${c%%|*} args=${c#*|}
    # shellcheck disable=SC2086
    { echo "# $(date -u +%H:%M:%S) load: $(cut -d' ' -f1-3 /proc/loadavg) command: bash run.sh $args --iters $iters"; bash run.sh $args --iters "$iters"; } >"$raw/${name}_$r.txt" 2>&1
  done
done
{ echo "# The main job on this machine (2 cores, 4 ranks oversubscribed), $runs runs per configuration"
  echo
  echo "Produced by \`ITERS=$iters bash bench/halo_local.sh $runs\` ($(date -u +%Y-%m-%d)); raw runs with their time and load in"
  echo "\`halo_local_runs/\`. us: each run's figure is the max over ranks of the per-rank median of $iters exchanges"
  echo "(round-robin over the variants); here the median over the runs and the runs' range. predicted: the cost"
  echo "model's price of the plan the variant runs (Cart_alltoallw plans: engine::predict; halo API plans:"
  echo "engine/halo price_halo; the linear loop as the direct plan, the hand-written exchange as the halo API's"
  echo "dimwise plan). bytes/rank: bytes the busiest rank sends to other ranks per exchange."
  for c in "${configs[@]}"; do
    name=${c%%|*} args=${c#*|}
    echo
    echo "## \`bash run.sh $args --iters $iters\`"
    echo
    echo "Loads (1-min) during the runs: $(grep -h '^# ' "$raw/${name}"_*.txt | sed 's/.*load: \([^ ]*\).*/\1/' | tr '\n' ' ')"
    echo
    python3 bench/smpi/halo_table.py --runs "$raw/${name}"_*.txt
  done; } >"$out/halo_local.md"
echo "bench/halo_local.sh: wrote $out/halo_local.md"
