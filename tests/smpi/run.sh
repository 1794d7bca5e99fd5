#!/usr/bin/env bash
# The SMPI flavour in CI (docs/smpi.md): builds the SimGrid SMPI build of the main job (tools/halo)
# and the sweep benchmark (bench/collective_bench), then simulates each twice on generated platforms:
# the halo at 64 ranks on the torus (3-D, checked bit for bit against the serial run), the benchmark at
# 16 ranks on the fat tree with one rank per node (every message on the simulated network; every
# variant's data checked). Each pair of runs must print identical simulated times (determinism).
# Calibrate's node-link probe at 8 ranks on two torus nodes must price the node's link at the
# platform's NIC bandwidth (less the fitted beta the model charges beside it) and set
# phase_overlap 1; on one node, or with --no-node-link, it must set neither. With the two nodes'
# ranks alternating (cyclic placement: rank r on node r mod 2) calibrate must say so and probe the
# same link. Without an eager limit (smpi/async-small-thresh 0) its default block sizes must still
# span 1 to 4096 ints or more.
# An unwritable --out fails calibrate before it measures, with a non-zero exit status.
# A hybrid plan whose round moves only temp slots into one-cell corners (1x1 subarrays, whose extents SMPI
# misreports) must deliver every corner (tools/halo --plan, 4 ranks, bit for bit), and measuring mode
# (CARTPLAN_TUNE=measure) on such blocks must run and deliver them too.
# cartplan's errors reach MPI_ERRORS_RETURN, MPI_ERRORS_ARE_FATAL and a user's handler (error_handler).
# Reductions and rooted ops refuse derived datatypes (SMPI's bounds for them are wrong; derived_bounds),
# and a halo whose element type's data lies outside its SMPI bounds fills every ghost cell.
# The graph set-up's long payloads (SMPI frames carry up to 64 ints inline, graph_setup.cc): a star
# of 66 ranks, whose hub sends its in-list of 65 ranks to each of them in the pairing and cumulative
# constructions, must build both and deliver every byte (graph_scale_bench, under a second).
# The grid's verdict sweep after forced-grid blocking and non-blocking calls (grid_calls, 16 ranks,
# 3-D and 4-D grids, every int checked, twice identical), and with its room out of memory on every
# rank or on one (every call fails alike, no hang).
# Progress without a hook: graph state creation, pattern construction, Cart_graph_comm_create_adjacent
# and Cart_neighborhood_create made by one rank before completing a request its peers completed
# first (progress_calls, 6 ranks) finish, every int checked.
# One line per check: "smpi <name>: OK" or "smpi <name>: FAILED (...)"; exit 1 on any failure.
#
#   bash tests/smpi/run.sh          # from anywhere; needs setup.sh's packages (libsimgrid-dev)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
work="$(mktemp -d "${TMPDIR:-/tmp}/cartplan-smpi.XXXXXX")"
trap 'rm -rf "$work"' EXIT
status=0
ok() { echo "smpi $1: OK"; }
fail() { echo "smpi $1: FAILED ($2)"; status=1; }
smpi_run() { timeout --signal=KILL 300 smpirun --log=xbt_cfg.thres:warning --log=smpi_config.thres:warning "$@"; }

if ! bazel build --config=smpi --ui_event_filters=-info,-stdout,-stderr --noshow_progress //tools:halo //bench:collective_bench //bench:calibrate //bench:graph_scale_bench //tests/smpi:error_handler //tests/smpi:derived_bounds //tests/smpi:grid_calls //tests/smpi:progress_calls \
     >"$work/build.log" 2>&1; then
  fail build "bazel build --config=smpi"; tail -n 30 "$work/build.log"; exit 1
fi
bin="$(bazel info --config=smpi bazel-bin 2>/dev/null)"
ok build
python3 bench/smpi/platforms.py torus --np 64 --out-dir "$work" >/dev/null
python3 bench/smpi/platforms.py fattree --np 512 --out-dir "$work" >/dev/null
seq 0 15 | sed 's/^/n/' >"$work/one_per_node.hosts"
printf 'n0\nn0\nn0\nn0\nn1\nn1\nn1\nn1\n' >"$work/two_nodes.hosts"
printf 'n0\nn0\nn0\nn0\nn0\nn0\nn0\nn0\n' >"$work/one_node.hosts"
printf 'n0\nn1\nn0\nn1\nn0\nn1\nn0\nn1\n' >"$work/two_nodes_cyclic.hosts"

# Runs a simulation twice; both outputs (without SimGrid's own lines) must be identical.
twice() {  # name, then the smpirun arguments
  local name=$1; shift
  for run in 1 2; do
    smpi_run "$@" >"$work/$name.$run" 2>"$work/$name.$run.err" || { fail "$name" "run $run exited $?"; tail -n 20 "$work/$name.$run.err"; return 1; }
  done
  if cmp -s "$work/$name.1" "$work/$name.2"; then ok "${name}_deterministic"; else fail "${name}_deterministic" "two runs differ"; diff "$work/$name.1" "$work/$name.2" | head; fi
}

if twice halo -np 64 -platform "$work/torus_p64.xml" -hostfile "$work/torus_p64.hosts" "$bin/tools/halo" --dims 3 --n 6 --periodic 1 --iters 5; then
  if grep -q '^check: OK (bit-for-bit)' "$work/halo.1" && grep -q '^linear Isend/Irecv' "$work/halo.1"; then ok halo_data; else fail halo_data "no bit-for-bit OK"; cat "$work/halo.1"; fi
fi
if twice bench -np 16 -platform "$work/fattree_p512.xml" -hostfile "$work/one_per_node.hosts" "$bin/bench/collective_bench" \
     --stencil box:d=2,n=3,f=-1 --op alltoallv --m 1,2000 --iters 2 --warmup 1; then
  rows=$(grep -vc '^#' "$work/bench.1")
  if [ "$rows" -eq 24 ] && ! grep -v '^#' "$work/bench.1" | grep -qv ' OK$'; then ok bench_data; else fail bench_data "$rows rows, or a variant not OK"; cat "$work/bench.1"; fi
fi

# An uneven decomposition (tools/halo --global): 3 x 3 ranks, interiors 6 or 5 cells per dimension,
# the halo API's plans per rank and the hand-written exchange, checked against the serial run.
if smpi_run -np 9 -platform "$work/torus_p64.xml" -hostfile "$work/torus_p64.hosts" "$bin/tools/halo" --dims 2 --procs 3,3 --global 17 --halo 2 \
     --periodic 1 --iters 3 >"$work/uneven.out" 2>"$work/uneven.err" \
   && grep -q '^check: OK (bit-for-bit)' "$work/uneven.out" && grep -q '^hand-written dimwise .* OK$' "$work/uneven.out"; then ok halo_uneven
else fail halo_uneven "no bit-for-bit OK"; grep -E 'MISMATCH|check:' "$work/uneven.out"; tail -n 5 "$work/uneven.err"; fi

# A hybrid plan (tests/smpi/hybrid_temp_message.json) whose round of tag 4 forwards two temp slots into
# two one-cell corners, 1x1 subarrays of doubles: SMPI reports such a type's extent as 8 bytes at lb 0,
# and cartplan, taking the corner for 8 contiguous bytes at the array's base, copied both corners there
# (bench/results/smpi/hybrid_temp_message.md). Every Cart_alltoallw variant runs the plan; one exchange.
if smpi_run -np 4 -platform "$work/torus_p64.xml" -hostfile "$work/torus_p64.hosts" "$bin/tools/halo" --dims 2 --n 8 --periodic 1 \
     --iters 2 --check exchange --plan tests/smpi/hybrid_temp_message.json >"$work/hyb_temp.out" 2>"$work/hyb_temp.err" \
   && grep -q '^check: OK (bit-for-bit' "$work/hyb_temp.out" && [ "$(grep -c '^cartplan .* hybrid .* OK$' "$work/hyb_temp.out")" -ge 5 ]; then
  ok hybrid_temp_message
else fail hybrid_temp_message "a Cart_alltoallw variant running the plan mismatched"; grep -E 'MISMATCH|check:' "$work/hyb_temp.out"; tail -n 5 "$work/hyb_temp.err"; fi
# Measuring mode (CARTPLAN_TUNE=measure) on subarray blocks: the trials' scratch came from the same
# misreported bounds, too short, and the trials wrote past it (a segmentation fault); under SMPI
# the trials are skipped for derived receive types and the model's pick is kept.
if CARTPLAN_TUNE=measure smpi_run -np 4 -platform "$work/torus_p64.xml" -hostfile "$work/torus_p64.hosts" "$bin/tools/halo" --dims 2 \
     --n 8 --periodic 1 --iters 2 --check exchange >"$work/measure_derived.out" 2>&1 \
   && grep -q '^check: OK (bit-for-bit' "$work/measure_derived.out"; then ok measure_derived
else fail measure_derived "no bit-for-bit OK with CARTPLAN_TUNE=measure"; tail -n 5 "$work/measure_derived.out"; fi

# Reductions and rooted ops with a derived datatype: their scratch blocks are laid out like one block
# of the call, sized from the type's bounds, which SMPI gets wrong for subarrays (a one-cell subarray
# at the end of a 40x40 array: 8 bytes); the calls wrote past them and crashed. Under SMPI they now
# refuse derived types (MPI_ERR_TYPE naming SMPI); with MPI_DOUBLE they sum right (derived_bounds.cc).
if smpi_run -np 4 -platform "$work/torus_p64.xml" -hostfile "$work/torus_p64.hosts" "$bin/tests/smpi/derived_bounds" reductions \
     >"$work/derived_reductions" 2>&1 && grep -q '^derived_bounds reductions: OK' "$work/derived_reductions"; then ok derived_reductions
else fail derived_reductions "no OK line"; grep -v '^\[' "$work/derived_reductions" | tail -n 5; fi
# The halo's temps and measuring scratch arrays, sized and addressed from the element type's true
# bounds: with a double at -8 resized to lb 0, extent 8, SMPI says true lb 0 and cartplan wrote 8 bytes
# before them (free(): invalid next size). Under SMPI a derived element's temps are packed bytes and
# measuring keeps the model's pick; every ghost cell must be right (derived_bounds.cc).
if smpi_run -np 4 -platform "$work/torus_p64.xml" -hostfile "$work/torus_p64.hosts" "$bin/tests/smpi/derived_bounds" halo \
     >"$work/derived_halo" 2>&1 && grep -q '^derived_bounds halo: OK' "$work/derived_halo"; then ok derived_halo
else fail derived_halo "no OK line"; grep -v '^\[' "$work/derived_halo" | tail -n 5; fi

# The set-up's long payloads: 65 in-neighbours of rank 0 (above the 64 ints a frame carries).
{ echo "ranks 66"; for r in $(seq 1 65); do echo "$r 0"; echo "0 $r"; done; } >"$work/star66.edges"
head -n 66 "$work/fattree_p512.hosts" >"$work/star66.hosts"
if smpi_run -np 66 -platform "$work/fattree_p512.xml" -hostfile "$work/star66.hosts" "$bin/bench/graph_scale_bench" \
     --graph "file:$work/star66.edges" --ops alltoall --bytes 4 --iters 1 --reps 2 --variants linear,pairing,cumulative \
     >"$work/setup_long.out" 2>"$work/setup_long.err"; then
  built=$(awk -F'|' '($3 ~ / pairing / || $3 ~ / cumulative /) && $12 + 0 == 0 && $12 ~ /[0-9]/' "$work/setup_long.out" | wc -l)
  if [ "$built" -eq 2 ]; then ok setup_long_payload; else fail setup_long_payload "pairing and cumulative not both built with 0 wrong bytes"; cat "$work/setup_long.out"; fi
else
  fail setup_long_payload "graph_scale_bench exited $?"; tail -n 20 "$work/setup_long.err"
fi
# The grid's verdict sweep (graph_setup.cc agree_grid: one-word frames of 3 ints under SMPI, received
# from each line peer by name), run by the first forced-grid blocking or non-blocking call on a
# communicator (persistent inits agree instead): allgather, alltoallv and their non-blocking forms
# first on 8 communicators (3-D and 4-D grids at 16 ranks) of an irregular graph, then every call
# twice, every int checked (grid_calls.cc); twice, identical. With the sweep's room out of memory
# (CARTPLAN_TEST_FAIL=grid-sweep-room, on every rank, then on rank 0, then on the last: grid_calls
# answers that variable per rank, as SMPI's ranks share one environment) that rank sweeps without
# requests (MPI_Sendrecv): every first call and the next return MPI_ERR_NO_MEM on every rank, no hang
# (3-D and 4-D grids; twice, identical).
twice grid_calls -np 16 -platform "$work/fattree_p512.xml" -hostfile "$work/one_per_node.hosts" "$bin/tests/smpi/grid_calls" data
if grep -q '^grid_calls data: OK' "$work/grid_calls.1" 2>/dev/null; then ok grid_calls_data
else fail grid_calls_data "no OK line"; grep -E '^rank [0-9]+:|^grid_calls ' "$work/grid_calls.1" | head -n 8; fi
twice grid_calls_room -np 16 -platform "$work/fattree_p512.xml" -hostfile "$work/one_per_node.hosts" "$bin/tests/smpi/grid_calls" room
if grep -q '^grid_calls room: OK' "$work/grid_calls_room.1" 2>/dev/null; then ok grid_calls_sweep_room
else fail grid_calls_sweep_room "no OK line"; grep -E '^rank [0-9]+:|^grid_calls .*: (OK|FAILED)' "$work/grid_calls_room.1" | head -n 8; fi
# Progress without a hook: rank 0 makes a graph call (the first on a graph: its duplicate; one that
# constructs pairing or the grid), Cart_graph_comm_create_adjacent or Cart_neighborhood_create before
# completing a multi-phase request its peers completed first (progress_calls.cc, 6 ranks, every int
# checked). Each case deadlocked (SimGrid stops the run) while those waits did not advance requests.
if smpi_run -np 6 -platform "$work/fattree_p512.xml" -hostfile "$work/one_per_node.hosts" "$bin/tests/smpi/progress_calls" \
     >"$work/progress_calls" 2>&1 && grep -q '^progress_calls: OK' "$work/progress_calls"; then ok progress_calls
else fail progress_calls "no OK line"; grep -E '^rank [0-9]+:|^progress_calls|Deadlock' "$work/progress_calls" | head -n 8; fi
# cartplan's errors under SMPI: MPI_ERRORS_RETURN returns the class and message, a user's handler is
# called, MPI_ERRORS_ARE_FATAL aborts with cartplan's message (SMPI 3.32 crashed in
# MPI_Comm_call_errhandler for both predefined handlers; smpirun exits 0 after MPI_Abort).
if smpi_run -np 4 -platform "$work/torus_p64.xml" -hostfile "$work/torus_p64.hosts" "$bin/tests/smpi/error_handler" return \
     >"$work/eh_return" 2>&1 && grep -q '^error_handler return: OK' "$work/eh_return"; then ok error_handler_return
else fail error_handler_return "no OK line"; tail -n 5 "$work/eh_return"; fi
# Fatal errors end the run cleanly: MPI_Abort on the rank that reports kills the others inside their
# MPI calls. SimGrid unwinds them with an exception that cartplan's C API caught ("internal error:
# unknown exception" from every other rank: backends/mpi/actor_kill.h), and SMPI's MPI_Abort left ranks
# blocked in a communication hanging ("Deadlock detected": backends/mpi/smpi_kill.h). Each case: the
# mode, its cartplan message, then env assignments for the run.
fatal_case() {
  local mode=$1 message=$2; shift 2
  env "$@" timeout --signal=KILL 300 smpirun --log=xbt_cfg.thres:warning --log=smpi_config.thres:warning -np 8 \
    -platform "$work/torus_p64.xml" -hostfile "$work/torus_p64.hosts" "$bin/tests/smpi/error_handler" "$mode" >"$work/eh_$mode" 2>&1
  local rc=$?
  if [ "$rc" -ne 139 ] && grep -q "^cartplan: rank [0-7]: $message" "$work/eh_$mode" && grep -q 'MPI_Abort was called' "$work/eh_$mode" \
     && ! grep -q 'instead of aborting' "$work/eh_$mode" && ! grep -q 'internal error' "$work/eh_$mode" \
     && ! grep -q 'Deadlock detected' "$work/eh_$mode"; then ok "error_handler_$mode"
  else fail "error_handler_$mode" "exit $rc; cartplan's message, then MPI_Abort, nothing else expected"; grep -v '^\[.*INFO\]' "$work/eh_$mode" | head -n 8; fi
}
fatal_case fatal 't = 0 (a neighbourhood needs at least one offset)'
fatal_case fatal-one 'another rank passed invalid arguments to Cart_neighborhood_create'
fatal_case fatal-halo "d = 3, but the communicator's grid has 2 dimensions"
fatal_case fatal-model "Info cartplan_cost_model: cannot read '/nonexistent/cartplan_model.json'"
fatal_case halo "CARTPLAN_COST_MODEL: cannot read '/nonexistent/cartplan_model.json'" CARTPLAN_COST_MODEL=/nonexistent/cartplan_model.json
# CARTPLAN_VERBOSE=1 says which cost model a halo on a plain MPI_Cart_create communicator plans with,
# once, on rank 0 (it said nothing there; Cart_neighborhood_create did), naming the installed
# calibration program too. With a calibrated model: see verbose_model_file below.
verbose_case() {  # name, the expected line (a grep pattern), env assignments
  local name=$1 line=$2; shift 2
  env -u CARTPLAN_COST_MODEL CARTPLAN_VERBOSE=1 XDG_CONFIG_HOME="$work/no_config" "$@" timeout --signal=KILL 300 smpirun \
    --log=xbt_cfg.thres:warning --log=smpi_config.thres:warning -np 4 -platform "$work/torus_p64.xml" -hostfile "$work/torus_p64.hosts" \
    "$bin/tests/smpi/error_handler" halo >"$work/$name.out" 2>"$work/$name.err"
  local rc=$? said; said=$(grep -c '^cartplan: .*cost model' "$work/$name.err")
  if [ "$rc" -eq 0 ] && grep -q '^error_handler halo: OK' "$work/$name.out" && [ "$said" -eq 1 ] && grep -q "$line" "$work/$name.err"; then ok "$name"
  else fail "$name" "exit $rc, $said model notices (expected 1: $line)"; grep -v '^\[' "$work/$name.err" | head -n 5; fi
}
verbose_case verbose_model_builtin '^cartplan: no calibrated cost model (CARTPLAN_COST_MODEL is unset and there is none at .*no_config/cartplan/cost_model_np4.json or .*); using the built-in defaults. cartplan-calibrate (bench/calibrate in the repository) measures one.$'
# A block-size mismatch in default mode (rank 0's blocks 2 doubles, the others' 2 ints) with
# MPI_ERRORS_RETURN on the communicator only: MPI_ERR_TRUNCATE on the ranks that receive one. SMPI's
# MPI_Waitall handed the truncation to MPI_COMM_WORLD's handler and aborted (backends/mpi/completion.h).
if smpi_run -np 4 -platform "$work/torus_p64.xml" -hostfile "$work/torus_p64.hosts" "$bin/tests/smpi/error_handler" truncate \
     >"$work/eh_truncate" 2>&1 && grep -q '^error_handler truncate: OK' "$work/eh_truncate"; then ok error_handler_truncate
else fail error_handler_truncate "no OK line"; grep -v 'Mismatched datatypes\|smpi_request/WARNING' "$work/eh_truncate" | head -n 8; fi

# The node link: torus NIC links are 6.911e9 B/s (bench/smpi/platforms.py), 1.44697e-4 us per byte;
# the probe's burst is priced beta x S + node_link x 4 x S, so node_link = 1.44697e-4 - beta / 4.
node_link_case() {  # name, hostfile, expected: "probed" or "none", calibrate's further options
  local name=$1 hosts=$2 want=$3; shift 3
  if ! smpi_run -np 8 -platform "$work/torus_p64.xml" -hostfile "$work/$hosts" "$bin/bench/calibrate" --specs 'box:d=2,n=3,f=-1' \
       --sizes 1,4096 --out "$work/$name.json" "$@" >"$work/$name.log" 2>&1; then
    fail "$name" "calibrate exited $?"; tail -n 20 "$work/$name.log"; return
  fi
  if python3 - "$work/$name.json" "$want" <<'PY'
import json, sys
m, want = json.load(open(sys.argv[1])), sys.argv[2]
link, overlap = m.get("node_link_us_per_byte", 0), m.get("phase_overlap", 0)
expected = 1e6 / 6.911e9 - m["beta_us_per_byte"] / 4  # the NIC's price less beta, per rank of the 4 sharing it
ok = abs(link / expected - 1) < 0.02 and overlap == 1 if want == "probed" else link == 0 and overlap == 0
print(f"node_link_us_per_byte {link} (expected: the NIC price minus beta / 4 = {expected:.6g}), phase_overlap {overlap}")
sys.exit(0 if ok else 1)
PY
  then ok "$name"; else fail "$name" "node_link_us_per_byte or phase_overlap not as expected ($want)"; fi
}
# A platform without an eager protocol (SimGrid's default smpi/async-small-thresh 0, as in a platform
# file without <config>): calibrate's default sizes must still be real blocks from 1 int to at least
# 4096 (calibrate_sizes.h), not the 0 to 8 ints placed around a limit of 0 bytes.
no_eager_case() {
  if ! smpi_run -np 4 -platform "$work/torus_p64.xml" --cfg=smpi/async-small-thresh:0 "$bin/bench/calibrate" \
       --specs 'box:d=2,n=3,f=-1' --quick --no-node-link --out "$work/no_eager.json" >"$work/no_eager.log" 2>&1; then
    fail calibrate_no_eager "calibrate exited $?"; tail -n 20 "$work/no_eager.log"; return
  fi
  local sizes; sizes=$(grep -o ' m=[0-9]*' "$work/no_eager.log" | sort -u | tr -d ' m=' | sort -n | tr '\n' ' ')
  if grep -q 'eager limit 0 bytes' "$work/no_eager.log" && [ "${sizes%% *}" = 1 ] && [ "$(echo $sizes | wc -w)" -eq 3 ] \
     && [ "$(echo $sizes | awk '{print $NF}')" -ge 4096 ]; then ok calibrate_no_eager
  else fail calibrate_no_eager "block sizes '$sizes' with eager limit 0"; head -n 3 "$work/no_eager.log"; fi
}
no_eager_case
# An --out that cannot be written fails at once with a non-zero exit (SMPI: smpirun reports the code),
# not "wrote FILE" after the measurements; an existing model is not touched by the check.
bad_out_case() {
  smpi_run -np 2 -platform "$work/torus_p64.xml" "$bin/bench/calibrate" --specs 'box:d=2,n=3,f=-1' --quick \
    --out "$work/no_such_dir/model.json" >"$work/bad_out.log" 2>&1
  local rc=$?
  if [ "$rc" -ne 0 ] && grep -q "^calibrate: cannot write --out $work/no_such_dir/model.json: No such file or directory" "$work/bad_out.log" \
     && ! grep -q '^wrote' "$work/bad_out.log" && ! grep -q ' m=' "$work/bad_out.log"; then ok calibrate_bad_out
  else fail calibrate_bad_out "exit $rc"; tail -n 5 "$work/bad_out.log"; fi
}
bad_out_case
node_link_case calibrate_node_link two_nodes.hosts probed
node_link_case calibrate_node_link_cyclic two_nodes_cyclic.hosts probed
if grep -q '^calibrate: np 8, .*, cyclic placement over 2 nodes (4 ranks per node)$' "$work/calibrate_node_link_cyclic.log"; then
  ok calibrate_cyclic_placement
else fail calibrate_cyclic_placement "calibrate did not report cyclic placement over 2 nodes"; head -n 1 "$work/calibrate_node_link_cyclic.log"; fi
node_link_case calibrate_one_node one_node.hosts none
node_link_case calibrate_no_node_link two_nodes.hosts none --no-node-link
verbose_case verbose_model_file "^cartplan: cost model from CARTPLAN_COST_MODEL = $work/calibrate_node_link.json\$" \
  CARTPLAN_COST_MODEL="$work/calibrate_node_link.json"
exit "$status"
