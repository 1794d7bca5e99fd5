#!/usr/bin/env bash
# Graph v calls in the steady state, before/after the size reuse (graph_sized_calls.h,
# graph_sized_chain.h), blocking (--form blocking, the default) or non-blocking (each call
# started and waited), against Open MPI, in one run per configuration (bench/graph_v_bench.cc interleaves the three
# variants repetition by repetition): np 2 on a 1-D Moore ring r=2 (parallel and self edges),
# np 4 on a periodic 2-D Moore graph r=1 and on a random graph (q = 0.6); pairing and
# cumulative forced; 2-8 ints per edge. Writes bench/results/<tag>/graph_v_bench/runs.txt
# (blocking) or runs_nonblocking.txt.
#   bash bench/graph_v_bench.sh [--reps 21] [--iters 200] [--form blocking|nonblocking]
set -euo pipefail
cd "$(dirname "$0")/.."
reps=21
iters=200
form=blocking
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) reps=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --form) form=$2; shift 2 ;;
    *) echo "graph_v_bench.sh: unknown argument '$1' (--reps N, --iters N, --form blocking|nonblocking)" >&2; exit 2 ;;
  esac
done
out=bench/results/${CARTPLAN_MACHINE_TAG:-cpp-2core}/graph_v_bench
mkdir -p "$out"
bazel build //bench:graph_v_bench >/dev/null 2>&1
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
runs="$out/runs.txt"
[ "$form" = blocking ] || runs="$out/runs_$form.txt"
: >"$runs"
for config in "2 moore:dims=2,r=2" "4 moore:dims=2x2,r=1" "4 random:p=4,q=0.6,seed=3"; do
  set -- $config
  for algorithm in pairing cumulative; do
    cmd="mpirun --oversubscribe --allow-run-as-root -np $1 bazel-bin/bench/graph_v_bench --graph $2 --algorithm $algorithm --ints 2 --reps $reps --iters $iters --form $form"
    { echo "\$ $cmd"; $cmd; echo; } | tee -a "$runs"
  done
done
