#!/usr/bin/env bash
# Long, random-seed fuzzing session (not part of test.sh): every target for FUZZ_TIME seconds
# (default 3600) with a fresh random seed, the per-input limit at 10 s (a slow input is a
# finding here), the spec target planning neighbourhoods of up to 2000 offsets, and the work
# directory kept (grown corpora, binaries). Findings land in tests/fuzz/findings/.
#
#   bash tests/fuzz/long.sh                          # an hour per target
#   FUZZ_TIME=600 FUZZ_TARGETS=spec bash tests/fuzz/long.sh
set -euo pipefail
export FUZZ_SEED=0
export FUZZ_TIME="${FUZZ_TIME:-3600}"
export FUZZ_INPUT_TIMEOUT="${FUZZ_INPUT_TIMEOUT:-10}"
export FUZZ_MAX_LEN="${FUZZ_MAX_LEN:-16384}"
export FUZZ_KEEP="${FUZZ_KEEP:-1}"
export CARTPLAN_FUZZ_MAX_PLAN_OFFSETS="${CARTPLAN_FUZZ_MAX_PLAN_OFFSETS:-2000}"
exec bash "$(dirname "${BASH_SOURCE[0]}")/run.sh" -1
