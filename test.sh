#!/usr/bin/env bash
# Runs every cartplan test (unit, property, CLI, and the MPI tests under mpirun) and
# ends with the plain summary line "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")"

bash ./setup.sh >/dev/null || { echo "setup failed"; echo "0 passed, 1 failed"; exit 1; }

log=$(mktemp)
# Benchmarks are built by bench/run.sh, not tested here.
bazel test --test_summary=short --test_tag_filters=-benchmark //... 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

# The layering rule: nothing below the MPI backend may depend on Open MPI.
mpi_deps=$(bazel query 'deps(//ir/...) + deps(//engine/...) + deps(//backends/sim/...)' 2>/dev/null | grep -c '^@openmpi//' || true)
if [ "$mpi_deps" -eq 0 ]; then
  echo "//:mpi_free_layers                                                       PASSED" | tee -a "$log"
else
  echo "//:mpi_free_layers                                                       FAILED ($mpi_deps Open MPI targets in deps of ir/, engine/, backends/sim/)" | tee -a "$log"
  status=1
fi

passed=$(grep -cE '^//[^ ]+ +(\(cached\) )?PASSED' "$log" || true)
failed=$(grep -cE '^//[^ ]+ +(FAILED|TIMEOUT|NO STATUS|FAILED TO BUILD|INCOMPLETE)' "$log" || true)
rm -f "$log"
# A build failure stops Bazel before it lists tests: count it as a failure.
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
echo "$passed passed, $failed failed"
exit "$status"
