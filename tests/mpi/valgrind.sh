#!/usr/bin/env bash
# Runs a short soak (soak_test_bin) on 2 ranks under valgrind memcheck; fails on invalid accesses, uninitialised use or definite leaks not suppressed as Open MPI's own.
#
# Usage: tests/mpi/valgrind.sh [SOAK_BINARY [ARGS...]]
#   default: bazel-bin/tests/mpi/soak_test_bin --iterations 2000 --loops 50 --rss-bound-kb 0
# Bazel: bazel test //tests/mpi:valgrind_test (about 20 s on 2 cores; logs are kept in
# bazel-testlogs/tests/mpi/valgrind_test/test.outputs/).
#
# Every rank runs as
#   mpirun --oversubscribe --allow-run-as-root -np 2 valgrind --error-exitcode=42 --leak-check=full
#     --errors-for-leak-kinds=definite --suppressions=tests/mpi/ompi.supp ... SOAK_BINARY ARGS
# (through run_mpi.sh, which sets up Open MPI as for every MPI test and enforces a time limit).
# ompi.supp only suppresses leaks allocated inside MPI_Init / the runtime's finalize / Open MPI's
# progress threads, and uninitialised bytes PMIx writes to its socket: never an invalid read or
# write, and never a stack through cartplan code.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if ! command -v valgrind >/dev/null 2>&1; then
  echo "valgrind.sh: valgrind is not installed (Debian: apt-get install valgrind); cannot run the leak check" >&2
  exit 1
fi
binary=${1:-bazel-bin/tests/mpi/soak_test_bin}
[ $# -gt 0 ] && shift
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(--iterations 2000 --loops 50 --rss-bound-kb 0)
if [ ! -x "$binary" ]; then
  echo "valgrind.sh: $binary is not an executable (bazel build //tests/mpi:soak_test_bin first)" >&2
  exit 1
fi

# Keep Open MPI's and PMIx's components loaded at finalize, so that their frames keep their
# names in leak reports (instead of ??? after dlclose) and the suppressions can name them.
export OMPI_MCA_mca_base_component_disable_dlclose=1 PMIX_MCA_mca_base_component_disable_dlclose=1

logdir=$(mktemp -d "${TEST_UNDECLARED_OUTPUTS_DIR:-${TMPDIR:-/tmp}}/valgrind.XXXXXX")
start=$(date +%s)
bash "$here/run_mpi.sh" 2 170 valgrind --error-exitcode=42 --leak-check=full --errors-for-leak-kinds=definite \
  --suppressions="$here/ompi.supp" --num-callers=40 --log-file="$logdir/vg.%p.log" \
  "$binary" "${args[@]}"
rc=$?
echo "valgrind.sh: mpirun exited with $rc after $(( $(date +%s) - start )) s; logs in $logdir"

# valgrind must really have run on both ranks and finished its report.
logs=("$logdir"/vg.*.log)
complete=0
for log in "${logs[@]}"; do
  [ -f "$log" ] || continue
  grep -q "ERROR SUMMARY:" "$log" && complete=$((complete + 1))
  grep -hE "ERROR SUMMARY:|definitely lost:|suppressed:" "$log" | sed "s|^|  $(basename "$log"): |"
done
status=0
if [ "$complete" -ne 2 ]; then
  echo "valgrind.sh: expected 2 complete valgrind reports, found $complete" >&2
  status=1
fi
# Any unsuppressed error: show each one with its stack (blank-line separated records).
if grep -qE "ERROR SUMMARY: [1-9]" "${logs[@]}" 2>/dev/null; then
  echo "valgrind.sh: valgrind found errors:" >&2
  for log in "${logs[@]}"; do
    awk '/^==[0-9]+== (Invalid|Conditional|Use of uninit|Syscall param|Mismatched|Source and destination|Argument|[0-9,]+ (\([0-9,]+ direct, [0-9,]+ indirect\) )?bytes in [0-9,]+ blocks are definitely)/ {p=1}
         p {print} /^==[0-9]+== $/ {p=0}' "$log" >&2
  done
  status=1
fi
if [ "$rc" -ne 0 ]; then
  [ "$rc" -eq 42 ] && echo "valgrind.sh: valgrind reported errors (exit 42)" >&2 \
                   || echo "valgrind.sh: the soak failed under valgrind (exit $rc)" >&2
  status=1
fi
[ "$status" -eq 0 ] && echo "valgrind.sh: PASSED (no invalid accesses, no uninitialised use, no definite leaks outside Open MPI)"
exit "$status"
