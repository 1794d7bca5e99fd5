#!/bin/bash
# Fix 1 of the README, before and after: builds tests/smpi/error_handler and tools/halo (SMPI
# flavour) with backends/mpi/api_guard.{cc,h} as they were before 16a2e6e (its parent), runs them,
# restores the files and rebuilds. Each run goes to raw/<name>.txt with its exact command first
# ("# command: ..."), its output, then "# exit status: N". From the repository root; changes the
# checkout's api_guard files for the duration (restored on exit).
set -u
P=bench/results/smpi/heldout; R=$P/raw
L="--log=xbt_cfg.thres:warning --log=smpi_config.thres:warning"
restore() { git checkout -- backends/mpi/api_guard.cc backends/mpi/api_guard.h; }
trap restore EXIT
BIN="$(bazel info --config=smpi bazel-bin 2>/dev/null)"
# record NAME MODEL ARGS...: smpirun ARGS, with CARTPLAN_COST_MODEL=MODEL unless MODEL is "-".
record() {
  local name=$1 model=$2; shift 2
  local envs=(); [ "$model" != - ] && envs=("CARTPLAN_COST_MODEL=$model")
  { echo "# command: ${envs[*]:+${envs[*]} }nice -n 5 smpirun $L $*"
    env "${envs[@]}" nice -n 5 timeout --signal=KILL 300 smpirun $L "$@" 2>&1
    echo "# exit status: $?"; } > "$R/$name.txt"
  echo "$name: $(tail -n 1 "$R/$name.txt")"
}
runs() {  # $1: before or after
  record ${1}_fix1_error_handler_return - -np 4 -platform $P/eth10g_flat.xml $BIN/tests/smpi/error_handler return
  record ${1}_fix1_error_handler_fatal - -np 4 -platform $P/eth10g_flat.xml $BIN/tests/smpi/error_handler fatal
  record ${1}_fix1_halo_missing_model /nonexistent.json -np 8 -platform $P/eth10g_flat.xml $BIN/tools/halo --dims 3 --n 8 --iters 2
}
git show 16a2e6e^:backends/mpi/api_guard.cc > backends/mpi/api_guard.cc
git show 16a2e6e^:backends/mpi/api_guard.h > backends/mpi/api_guard.h
nice -n 5 bazel build --config=smpi --ui_event_filters=-info,-stdout,-stderr --noshow_progress //tools:halo //tests/smpi:error_handler || exit 1
runs before
restore
nice -n 5 bazel build --config=smpi --ui_event_filters=-info,-stdout,-stderr --noshow_progress //tools:halo //tests/smpi:error_handler || exit 1
runs after
