#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan + libFuzzer; not Bazel, whose toolchain
# is gcc) and runs each on a copy of its seed corpus.
#
#   bash tests/fuzz/run.sh [RUNS]     # default: 20000 runs (plan_json, spec), 3000 (differential)
#
# By default the run is deterministic (what test.sh uses): a fixed seed per target, a fixed
# number of runs, no time cap, and inputs bounded (-max_len, CARTPLAN_FUZZ_MAX_PLAN_OFFSETS) so
# that the slowest input stays far below the per-input limit, which only catches hangs.
# Random-seed, time-bound sessions: tests/fuzz/long.sh (tests/fuzz/README.md).
#
# Environment: FUZZ_SEED (libFuzzer -seed, default 1; 0 = random), FUZZ_TIME (seconds per target,
# -max_total_time; default none), FUZZ_INPUT_TIMEOUT (per-input -timeout, default 300),
# FUZZ_MAX_LEN (default 4096), FUZZ_TARGETS (space-separated subset), FUZZ_JOBS (parallel
# compile jobs, default nproc), FUZZ_KEEP=1 (keep the build/work directory and print its path),
# FUZZ_EXTRA (extra libFuzzer flags), CARTPLAN_FUZZ_MAX_PLAN_OFFSETS (spec target, default 256).
# Quiet on success: one line per target, "fuzz <name>: <runs> runs, OK". On a crash, timeout or
# out-of-memory the input is saved under tests/fuzz/findings/, the log tail is printed and the
# script exits 1.
set -euo pipefail

RUNS="${1:-}"
# Runs per target when RUNS is not given: the differential target plans and simulates every
# input (about 50 inputs/s under the sanitizers), the others take thousands per second.
default_runs() { case "$1" in differential) echo 3000 ;; *) echo 20000 ;; esac; }
TIME="${FUZZ_TIME:-}"
SEED="${FUZZ_SEED:-1}"
INPUT_TIMEOUT="${FUZZ_INPUT_TIMEOUT:-300}"
MAX_LEN="${FUZZ_MAX_LEN:-4096}"
export CARTPLAN_FUZZ_MAX_PLAN_OFFSETS="${CARTPLAN_FUZZ_MAX_PLAN_OFFSETS:-256}"
TARGETS="${FUZZ_TARGETS:-plan_json spec differential}"
JOBS="${FUZZ_JOBS:-$(nproc)}"
CXX="${CXX:-clang++}"

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
cd "$ROOT"

command -v "$CXX" >/dev/null || { echo "run.sh: $CXX not found (apt-get install clang libclang-rt-14-dev)" >&2; exit 2; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/cartplan-fuzz.XXXXXX")"
if [[ "${FUZZ_KEEP:-0}" == 1 ]]; then
  echo "run.sh: work directory $WORK" >&2
else
  trap 'rm -rf "$WORK"' EXIT
fi

FLAGS=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fno-sanitize-recover=undefined -I "$ROOT")
LIB_SAN=-fsanitize=fuzzer-no-link,address,undefined   # instrumented, no libFuzzer main
BIN_SAN=-fsanitize=fuzzer,address,undefined

# Library sources: ir/, engine/, backends/sim/ without tests.
mapfile -t SRCS < <(ls ir/*.cc engine/*.cc backends/sim/*.cc | grep -v '_test\.cc$')
mkdir -p "$WORK/obj"
compile() {  # src obj san
  "$CXX" "${FLAGS[@]}" "$3" -c "$1" -o "$2" >>"$WORK/compile.log" 2>&1 || {
    echo "$1" >>"$WORK/failed"; }
}
OBJS=()
run_limited() {  # keep at most JOBS compilers running
  while (( $(jobs -rp | wc -l) >= JOBS )); do wait -n || true; done
  compile "$@" &
}
for s in "${SRCS[@]}"; do
  o="$WORK/obj/$(echo "$s" | tr / _).o"
  OBJS+=("$o")
  run_limited "$s" "$o" "$LIB_SAN"
done
for t in $TARGETS; do
  run_limited "tests/fuzz/${t}_fuzz.cc" "$WORK/obj/${t}_fuzz.o" "$BIN_SAN"
done
wait
if [[ -f "$WORK/failed" ]]; then
  echo "run.sh: compiling failed: $(tr '\n' ' ' <"$WORK/failed")" >&2; cat "$WORK/compile.log" >&2; exit 2
fi
for t in $TARGETS; do
  "$CXX" "${FLAGS[@]}" "$BIN_SAN" "$WORK/obj/${t}_fuzz.o" "${OBJS[@]}" -o "$WORK/${t}_fuzz" \
    >>"$WORK/compile.log" 2>&1 || { echo "run.sh: linking ${t}_fuzz failed:" >&2; cat "$WORK/compile.log" >&2; exit 2; }
done

# One target: fuzz a copy of its seed corpus; writes $WORK/$t.result ("OK <runs>" or "FAIL <rc>").
fuzz_one() {
  local t="$1" corpus="$WORK/corpus/$1" art="$WORK/artifacts/$1/" log="$WORK/$1.log" rc=0
  local runs="${RUNS:-$(default_runs "$1")}"
  local dict=()
  mkdir -p "$corpus" "$art"
  cp -r "$HERE/corpus/$t/." "$corpus/"
  [[ -f "$HERE/$t.dict" ]] && dict=(-dict="$HERE/$t.dict")
  # shellcheck disable=SC2086
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ASAN_OPTIONS=detect_leaks=1 \
    "$WORK/${t}_fuzz" "$corpus" "${dict[@]}" -runs="$runs" ${TIME:+-max_total_time=$TIME} -seed="$SEED" \
    -max_len="$MAX_LEN" -rss_limit_mb=2048 -timeout="$INPUT_TIMEOUT" -artifact_prefix="$art" -print_final_stats=1 ${FUZZ_EXTRA:-} \
    >"$log" 2>&1 || rc=$?
  if (( rc != 0 )) || [[ -n "$(ls -A "$art")" ]]; then
    echo "FAIL $rc" >"$WORK/$t.result"
  else
    echo "OK $(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)" >"$WORK/$t.result"
  fi
}

# Targets run side by side (at most JOBS at a time); results are reported in target order.
for t in $TARGETS; do
  while (( $(jobs -rp | wc -l) >= JOBS )); do wait -n || true; done
  fuzz_one "$t" &
done
wait

status=0
for t in $TARGETS; do
  read -r verdict detail <"$WORK/$t.result"
  if [[ "$verdict" == OK ]]; then
    echo "fuzz $t: ${detail:-?} runs, OK"
    continue
  fi
  status=1
  art="$WORK/artifacts/$t"
  saved=()
  for f in $(ls -A "$art"); do
    mkdir -p "$HERE/findings"
    cp "$art/$f" "$HERE/findings/$t-$f"
    saved+=("tests/fuzz/findings/$t-$f")
  done
  echo "fuzz $t: FAILED (exit $detail); inputs saved: ${saved[*]:-none}" >&2
  grep -v '^#[0-9]' "$WORK/$t.log" | tail -n 60 >&2
done
exit "$status"
