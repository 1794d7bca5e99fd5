#!/usr/bin/env bash
# The blocking and non-blocking targets of the MPI-semantics work, at np = 2 in one run:
# Cart_alltoall / Cart_allgather (blocking, Cart_i* + Cart_wait, persistent) for direct and
# combining plans against MPI_Neighbor_*, MPI_Ineighbor_* and MPIX persistent, on
# box:d=2..5,n=3,f=-1 with m = 1 int. Writes bench/results/<tag>/blocking_np2.{csv,txt,md}.
#
#   bash bench/blocking.sh            # 100 repetitions per variant
#   REPS=30 bash bench/blocking.sh    # quicker
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
tag="${CARTPLAN_MACHINE_TAG:-cpp-2core}"
out="bench/results/$tag"
mkdir -p "$out"
reps="${REPS:-100}"
bazel build -c opt //bench:exchange_bench >/dev/null 2>&1 || { echo "blocking.sh: build failed" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cp "$(bazel info -c opt bazel-bin 2>/dev/null)/bench/exchange_bench" "$tmp/"
export OMPI_MCA_mpi_yield_when_idle=1
args=(--stencil box:d=2,n=3,f=-1 --stencil box:d=3,n=3,f=-1 --stencil box:d=4,n=3,f=-1 --stencil box:d=5,n=3,f=-1
      --m 1 --ops alltoall,allgather --reps "$reps" --warmup 10)
echo "mpirun -np 2 exchange_bench ${args[*]} --csv blocking_np2.csv" >"$out/blocking_np2.cmd"
mpirun --allow-run-as-root --oversubscribe -np 2 "$tmp/exchange_bench" "${args[@]}" --csv "$out/blocking_np2.csv" \
  >"$out/blocking_np2.txt"
python3 bench/blocking_table.py "$out/blocking_np2.csv" >"$out/blocking_np2.md"
cat "$out/blocking_np2.md"
