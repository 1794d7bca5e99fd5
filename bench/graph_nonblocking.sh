#!/usr/bin/env bash
# Non-blocking graph calls with and without the pool (bench/graph_nonblocking_bench.cc), per
# algorithm, at np 2 (one rank per core) and np 4 (two per core); writes
# bench/results/cpp-2core/graph_nonblocking.md with the commands.
#   bash bench/graph_nonblocking.sh [REPS]
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-21}
bazel build -c opt --ui_event_filters=-info,-stdout,-stderr --noshow_progress //bench:graph_nonblocking_bench
bin=bazel-bin/bench/graph_nonblocking_bench
out=bench/results/cpp-2core/graph_nonblocking.md
{
  echo "# Non-blocking graph calls: pooled against building every call"
  echo
  echo "\`bash bench/graph_nonblocking.sh $reps\` on $(date -u +%Y-%m-%d) (load at start: $(cut -d' ' -f1-3 /proc/loadavg)), commit $(git rev-parse --short HEAD)."
  echo "Each table: one run of the command above it; us per call + wait, the slowest rank's mean over 200 calls per repetition."
  for np_graph in "2 random:p=2,q=1,seed=1" "4 moore:dims=2x2,r=1"; do
    set -- $np_graph
    for algo in linear pairing grid; do
      for op in allgather alltoall; do
        cmd="mpirun --oversubscribe --allow-run-as-root -np $1 $bin --graph $2 --algorithm $algo --op $op --bytes 8 --reps $reps --iters 200"
        echo
        echo "    $cmd"
        echo
        $cmd
      done
    done
  done
} > "$out"
echo "wrote $out"
