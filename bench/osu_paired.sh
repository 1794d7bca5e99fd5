#!/usr/bin/env bash
# The drop-in against plain Open MPI in ONE launch (issue 34): bench/osu_neighbor --paired times
# each size through the MPI_ entry points (the drop-in's, preloaded) and the PMPI_ ones (Open MPI's
# own) in alternating batches, so both see the same machine state. On this 2-core VM each launch
# lands in one of a few speed modes (at np 2, 8 B shift: about 0.21, 0.32 or 0.58 us, whatever the
# binding), and bench/osu_neighbor.sh's median over launches is then decided by how many launches
# of each variant landed in the slow mode; a within-launch ratio is not.
# Modes per configuration, each --launches times: `plain` (no preload: MPI_ and PMPI_ are both
# Open MPI; its ratio is the method's own error, an A/A control), `preload` (the drop-in, auto),
# `native` (osu_neighbor_native: cartplan's native API, auto, against PMPI_ on a graph of the same
# neighbours; preload's ratio over native's is the drop-in against the native API's same plan,
# each measured against Open MPI in its own launches) and, on the shift, `direct`
# (CARTPLAN_INTERPOSE_ALGORITHM=direct: cartplan runs the one message, so mpi_us - pmpi_us is its
# per-call overhead). osu_neighbor.sh's configurations (np 2 to 27). CSV columns mpi_us/pmpi_us: the
# benchmark's own side (MPI_, or the native API) and the PMPI_ reference.
# Writes bench/results/<tag>/osu_paired.csv and osu_paired.md (bench/osu_paired_summary.py).
#   bash bench/osu_paired.sh [--launches N] [--only REGEX] [--ops allgather,alltoall] [--native-flags 'FLAGS']
# (--native-flags: more osu_neighbor_native flags, e.g. '--algorithm direct', or '--rank-offsets'
# to give the native API the neighbourhood the drop-in derives, so that both run the same plan)
set -euo pipefail
cd "$(dirname "$0")/.."
launches=5
only=""
ops="allgather alltoall"
native_flags=""
while [ $# -gt 0 ]; do
  case "$1" in
    --launches) launches=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --ops) ops=${2//,/ }; shift 2 ;;
    --native-flags) native_flags=$2; shift 2 ;;
    *) echo "osu_paired.sh: unknown argument '$1' (--launches N, --only REGEX, --ops allgather,alltoall, --native-flags 'FLAGS')" >&2; exit 2 ;;
  esac
done
source bench/osu_setup.sh
csv=$out/osu_paired.csv
# name topo d r np iterations [flags]; modes. np > 2 is oversubscribed on a 2-core machine: the
# pairing still compares the two entry points inside one launch, under the same sharing of cores.
configs=(
  "graph-shift-np2 graph 1 1 2 4000 --shift"
  "graph-1d-r1-np2 graph 1 1 2 4000"
  "cart-3d-r1-np2 cart 3 1 2 2000"
  "cart-4d-r1-np2 cart 4 1 2 1000"
  "graph-1d-r2-np4 graph 1 2 4 1000"
  "cart-2d-r1-np9 cart 2 1 9 300"
  "graph-2d-r1-np9 graph 2 1 9 300"
  "cart-3d-r1-np27 cart 3 1 27 40"
)
echo "config,op,form,mode,launch,bytes,mpi_us,pmpi_us,ratio" > "$csv"
{ echo "# started"; uptime; } > "$out/osu_paired_load.txt"
for config in "${configs[@]}"; do
  read -r name topo d r np iters flags <<< "$config"
  [ -n "$only" ] && ! [[ "$name" =~ $only ]] && continue
  modes="plain preload native"
  [[ "$flags" == *--shift* ]] && modes="plain preload direct"
  for op in $ops; do
    for form in blocking nonblocking persistent; do
      echo "osu_paired.sh: $name $op $form" >&2
      for ((i = 0; i < launches; ++i)); do
        for mode in $modes; do
          pre=()
          bin=$prog
          more=""
          [ "$mode" = native ] && bin=$native && more=$native_flags
          [ "$mode" = preload ] && pre=(-x LD_PRELOAD="$lib")
          [ "$mode" = direct ] && pre=(-x LD_PRELOAD="$lib" -x CARTPLAN_INTERPOSE_ALGORITHM=direct)
          # shellcheck disable=SC2086  # flags, more: zero or more words
          mpirun --oversubscribe --allow-run-as-root -np "$np" "${pre[@]}" "$bin" --topo "$topo" --d "$d" --r "$r" --op "$op" \
            --form "$form" --sizes "$sizes" --iterations "$iters" --warmup $((iters / 10 + 1)) --check --paired $flags $more |
            awk -v pre="$name,$op,$form,$mode,$i" '$1 == "ERRORS" { print "wrong data: " pre " " $0 > "/dev/stderr"; exit 1 }
                                                   { print pre "," $1 "," $2 "," $3 "," $4 }' >> "$csv"
        done
      done
    done
  done
done
{ echo "# finished"; uptime; } >> "$out/osu_paired_load.txt"
python3 bench/osu_paired_summary.py "$csv" "$out/osu_paired.md"
