#!/usr/bin/env bash
# The drop-in's per-call cost in instructions (valgrind's callgrind), which the machine's load
# moves far less than time: bench/osu_neighbor at np = 2, rank 0 under callgrind counting the
# instructions inside each timed call (one_call(); counts are zeroed when the timed loop starts,
# so the warm-up, where the drop-in plans a new call shape, is not counted), rank 1 natively at a
# raised priority (nice -10, as root). The calls are paced (osu_neighbor --pace 200: rank 0 tells rank 1 to
# go, then sleeps 200 us), so that rank 1's messages have arrived when rank 0 makes its call and
# rank 0 hardly polls: what is counted is the call's own work, receiving included. (Without root,
# rank 1 runs at normal priority.) Each case runs --runs times (3) with
# 1000 timed calls; bench/callgrind_table.py shows the run that polled least and says what each
# column counts. Cases, all 8-byte blocks:
#  - shift: the one-offset shift (one message per process in every plan): plain Open MPI, the
#    drop-in in auto (passes through), the drop-in forced to direct (cartplan runs Open MPI's
#    messages: its own per-call cost), the native API's direct plan; alltoall, blocking,
#    non-blocking and persistent;
#  - cart3d: cart 3-D Moore r=1 (26 neighbours, where the drop-in accelerates): plain, the
#    drop-in in auto, the native API in auto; allgather, the same three forms;
#  - moore1d: graph 1-D Moore r=1 at np = 2 (both neighbours are the other rank: the drop-in's
#    direct plan sends one message where Open MPI sends two): plain, the drop-in in auto, the
#    native API in auto; alltoall, the same three forms.
# --baseline OLD.so adds the given (earlier) build of the library beside every preloaded mode, so
# a change is compared with what it changed in one table.
#
#   bash bench/callgrind_overhead.sh [--baseline OLD.so] [--runs N] [--only REGEX] [--keep DIR] [--pace US] [--osu-configs]
# --osu-configs: instead of the cases above, the issue's OSU configurations with np = 4-27
# (osu_configs below); oversubscribed here, so give a long --pace (e.g. 20000).
# --pace US: rank 0's sleep after each go message (default 200); on a loaded machine rank 1 may
# not have sent within 200 us, and rank 0 then runs progress rounds (persistent calls count the
# progress callbacks' work in every round): a longer pace keeps them out.
# --keep DIR: the profiles are copied there (callgrind_annotate reads them). --no-build: use
# what bazel-bin holds (while another bazel command has the workspace).
# Writes the table to stdout and to bench/results/<tag>/callgrind_overhead.md (tag cpp-2core
# unless CARTPLAN_MACHINE_TAG is set), with the command and the machine's load.
set -euo pipefail
cd "$(dirname "$0")/.."
baseline=""
only=""
runs=3
keep=""
build=1
pace=200
osu=0
while [ $# -gt 0 ]; do
  case "$1" in
    --baseline) baseline=$(realpath "$2"); shift 2 ;;
    --only) only=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --keep) keep=$(realpath "$2"); shift 2 ;;
    --no-build) build=0; shift ;;
    --pace) pace=$2; shift 2 ;;
    --osu-configs) osu=1; shift ;;
    *) echo "callgrind_overhead.sh: unknown argument '$1' (--baseline LIB, --runs N, --only REGEX, --keep DIR, --no-build, --pace US, --osu-configs)" >&2; exit 2 ;;
  esac
done
tag=${CARTPLAN_MACHINE_TAG:-cpp-2core}
out=bench/results/$tag
mkdir -p "$out"
targets=(//bench:osu_neighbor //bench:osu_neighbor_native //backends/interpose:libcartplan_interpose.so)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The default configuration's output tree, not whatever bazel-bin points to (after a
# --config=asan build it is the sanitized tree).
if [ "$build" = 1 ]; then
  source bench/build_copy.sh
  build_copy "$work" "${targets[@]}"
else
  bin=$(readlink -f bazel-out)/k8-fastbuild/bin
  for f in bench/osu_neighbor bench/osu_neighbor_native backends/interpose/libcartplan_interpose.so; do
    [ -f "$bin/$f" ] || { echo "callgrind_overhead.sh: $bin/$f is missing (build it, or drop --no-build)" >&2; exit 1; }
    cp "$bin/$f" "$work"/
  done
fi
# Rank 1 runs at a raised priority when that is allowed (nice -n -10 needs root).
nice_cmd=""
[ "$(id -u)" = 0 ] && nice_cmd="nice -n -10"
# The baseline keeps the library's name (callgrind_table.py finds cartplan's code by it).
[ -n "$baseline" ] && mkdir "$work/baseline" && cp "$baseline" "$work/baseline/libcartplan_interpose.so"
# Rank 0 under callgrind, collecting inside one_call() from the timed loop on; the preload is set
# here, not on the wrapper's own shell.
cat > "$work/rank0.sh" <<EOF
#!/usr/bin/env bash
if [ "\${OMPI_COMM_WORLD_RANK:-0}" = 0 ]; then
  LD_PRELOAD=\${CG_PRELOAD:-} exec valgrind --tool=callgrind --collect-atstart=no '--toggle-collect=*::one_call(*' '--zero-before=*::timed_calls(*' \\
    --callgrind-out-file="\$CG_OUT" "\$@" 2>/dev/null
fi
LD_PRELOAD=\${CG_PRELOAD:-} exec \${CG_NICE:-} "\$@"
EOF
chmod +x "$work/rank0.sh"
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_mpi_yield_when_idle=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
n=1000
np=2  # the processes of the case being profiled (the --osu-configs cases set their own)
manifest=$work/manifest.tsv
: > "$manifest"
# label mode form [osu_neighbor flags]
profile() {
  local label=$1 mode=$2 form=$3
  shift 3
  [ -n "$only" ] && ! [[ "$label" =~ $only ]] && return 0
  local bin=$work/osu_neighbor preload="" env=()
  case "$mode" in
    plain) ;;
    preload) preload=$work/libcartplan_interpose.so ;;
    direct) preload=$work/libcartplan_interpose.so; env=(-x CARTPLAN_INTERPOSE_ALGORITHM=direct) ;;
    baseline) preload=$work/baseline/libcartplan_interpose.so ;;
    baseline-direct) preload=$work/baseline/libcartplan_interpose.so; env=(-x CARTPLAN_INTERPOSE_ALGORITHM=direct) ;;
    native-*) bin=$work/osu_neighbor_native; set -- "$@" --algorithm "${mode#native-}" ;;
  esac
  local run files=()
  for run in $(seq "$runs"); do
    local f=$work/$(echo "$label" | tr ' /' '__').$run.out
    # With more than one peer, raised-priority peers that spin starve rank 0 on two cores: they
    # run at normal priority and yield when idle (the pace lets them send first).
    local nice_now=$nice_cmd yield=0
    [ "$np" -gt 2 ] && nice_now="" && yield=1
    mpirun --oversubscribe --allow-run-as-root -np "$np" -x CG_NICE="$nice_now" -x OMPI_MCA_mpi_yield_when_idle=$yield -x CG_OUT="$f" -x CG_PRELOAD="$preload" "${env[@]}" "$work/rank0.sh" \
      "$bin" --form "$form" --sizes 8 --iterations "$n" --warmup 100 --batch "$n" --pace "$pace" "$@" > /dev/null
    files+=("$f")
  done
  (IFS=$'\t'; echo "$label	$n	${files[*]}") >> "$manifest"
}
modes_for() {  # the preloaded modes, with the baseline's beside them
  local m
  for m in "$@"; do
    echo "$m"
    if [ -n "$baseline" ]; then
      case "$m" in preload) echo baseline ;; direct) echo baseline-direct ;; esac
    fi
  done
}
# The issue's OSU OMB configurations with np > 2 (bench/osu_neighbor.sh's names), where the
# drop-in passes through at most sizes: plain and preloaded, both ops, blocking and non-blocking.
# The messages are then Open MPI's own, so the preloaded row's extra instructions outside polling
# are all the drop-in adds to the call. 200 calls each, paced per --pace.
osu_configs() {
  local cfg name topo d r op form mode
  for cfg in "graph-1d-r2-np4 graph 1 2 4" "cart-2d-r1-np9 cart 2 1 9" "graph-2d-r1-np9 graph 2 1 9" \
             "cart-3d-r1-np27 cart 3 1 27"; do
    read -r name topo d r np <<< "$cfg"
    for op in allgather alltoall; do
      for form in blocking nonblocking; do
        for mode in $(modes_for plain preload); do
          profile "$name $op $form $mode" "$mode" "$form" --topo "$topo" --d "$d" --r "$r" --op "$op"
        done
      done
    done
  done
  # The one configuration and size range where auto accelerates (blocking, 512 B and up).
  np=4
  for op in allgather alltoall; do
    for mode in $(modes_for plain preload); do
      profile "graph-1d-r2-np4 1KB $op blocking $mode" "$mode" blocking --topo graph --d 1 --r 2 --op "$op" --sizes 1024
    done
  done
  np=2
}
load_before=$(uptime)
if [ "$osu" = 1 ]; then
  n=200
  osu_configs
else
for form in blocking nonblocking persistent; do
  for mode in $(modes_for plain preload direct native-direct); do
    profile "shift alltoall $form $mode" "$mode" "$form" --topo graph --d 1 --r 1 --shift --op alltoall
  done
  for mode in $(modes_for plain preload native-auto); do
    profile "cart3d allgather $form $mode" "$mode" "$form" --topo cart --d 3 --r 1 --op allgather
  done
  for mode in $(modes_for plain preload native-auto); do
    profile "moore1d alltoall $form $mode" "$mode" "$form" --topo graph --d 1 --r 1 --op alltoall
  done
done
fi
load_after=$(uptime)
[ -n "$keep" ] && mkdir -p "$keep" && cp "$work"/*.out "$keep"/
table=$(python3 bench/callgrind_table.py "$manifest")
{
  echo "# Instructions per call, callgrind on rank 0 (np = 2, 8-byte blocks)"
  echo
  echo "Command: \`bash bench/callgrind_overhead.sh${baseline:+ --baseline $baseline} --runs $runs${only:+ --only '$only'}$([ "$pace" = 200 ] || echo " --pace $pace")$([ "$osu" = 0 ] || echo " --osu-configs")\`"
  echo "(git $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- backends bench || echo ', uncommitted changes'));"
  echo "load: \`$load_before\` before, \`$load_after\` after. Columns: bench/callgrind_table.py."
  echo
  echo "$table"
} | tee "$out/callgrind_overhead.md"
