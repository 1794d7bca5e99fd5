#!/usr/bin/env bash
# Runs an MPI test binary under mpirun with a hard time limit, so a deadlock fails the test
# with a message instead of hanging CI.
# Usage: run_mpi.sh [--preload LIB] [--env VAR=VALUE]... NP SECONDS BINARY [ARGS...]
#   --preload LIB: every rank runs with LD_PRELOAD=LIB (the drop-in: an unchanged program)
#   --env VAR=VALUE: set for every rank (e.g. CARTPLAN_INTERPOSE_ALGORITHM=combining)
set -uo pipefail
ranks_env=()
while [ $# -gt 0 ]; do
  case "$1" in
    --preload) ranks_env+=(-x "LD_PRELOAD=$(realpath "$2")"); shift 2 ;;
    --env) ranks_env+=(-x "$2"); shift 2 ;;
    *) break ;;
  esac
done
np=$1; limit=$2; shift 2
binary=$1; shift
# Oversubscription is the norm here (2 cores); yield when idle so waiting ranks do not starve
# the ones doing work. Root is how CI runs.
export OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# The sandbox has no network interfaces to speak of: keep Open MPI on shared memory and self.
export OMPI_MCA_btl=self,vader
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# Bazel runs tests in PID namespaces, so concurrent mpiruns can get the same job id; give each
# run its own session directory and keep PMIx off shared-memory segments named by job id.
session_dir=$(mktemp -d "${TEST_TMPDIR:-${TMPDIR:-/tmp}}/ompi.XXXXXX")
export OMPI_MCA_orte_tmpdir_base="$session_dir" TMPDIR="$session_dir"
export PMIX_MCA_gds=hash
# Sanitizer settings of `bazel test --config=asan|ubsan` reach the ranks only if forwarded.
# Open MPI unloads its components at MPI_Finalize, so LeakSanitizer cannot even name the
# frames of Open MPI's own process-lifetime allocations (and suppressions cannot match them):
# under ASan, MPI runs check memory errors, and leaks are checked by valgrind_test instead,
# with Open MPI's frames suppressed by name (tests/mpi/ompi.supp).
if [ -n "${ASAN_OPTIONS:-}" ]; then export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"; fi
forward=()
for var in ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS; do
  if [ -n "${!var:-}" ]; then forward+=(-x "$var"); fi
done
timeout --signal=KILL "$limit" mpirun --oversubscribe --allow-run-as-root "${forward[@]}" "${ranks_env[@]}" -np "$np" "$binary" "$@"
rc=$?
if [ "$rc" -eq 137 ]; then echo "run_mpi.sh: $binary with $np ranks did not finish within $limit s (deadlock?)" >&2; fi
rm -rf "$session_dir"
exit "$rc"
