#!/usr/bin/env bash
# One main-job point (tools/halo, periodic, back to back) under three rank placements on one platform, with the
# platform's p = 256 model: block (the committed runs: cores filled node by node), one rank per node (every
# neighbour off-node), all ranks on one node (every neighbour through the loopback). It asks whether the halo
# API's misses against the linear loop come from the plans or from how the ranks sit on nodes.
#   bash bench/smpi/halo_placement.sh PLATFORM NP D N K [LIMIT_S]   # -> bench/results/smpi/placement_halo/halo_<platform>_p<np>_d<D>_n<N>_k<K>_<placement>.txt
# Tabulate: python3 bench/smpi/halo_table.py --linear bench/results/smpi/placement_halo/*.txt
# HALO_BIN_DIR: a directory holding an SMPI build's tools/halo (otherwise bazel builds it).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
pl=$1 np=$2 d=$3 n=$4 k=$5 limit=${6:-600}
r=bench/results/smpi
outdir=$r/placement_halo
mkdir -p "$outdir" out/smpi/platforms
if [ -n "${HALO_BIN_DIR:-}" ]; then
  bin="$HALO_BIN_DIR"
else
  bazel build --config=smpi --ui_event_filters=-info,-stdout,-stderr --noshow_progress //tools:halo
  bin="$(bazel info --config=smpi bazel-bin 2>/dev/null)"
fi
plat=out/smpi/platforms
python3 bench/smpi/platforms.py "$pl" --np "$np" --out-dir "$plat" >/dev/null
# A platform with at least np nodes for one rank per node: np x cores ranks' worth.
cores=$(python3 bench/smpi/platforms.py "$pl" --np 1 --print-params | awk '$1 == "cores_per_node" {print $2}')
wide=$((np * cores))
python3 bench/smpi/platforms.py "$pl" --np "$wide" --out-dir "$plat" >/dev/null
for i in $(seq 0 $((np - 1))); do echo "n$i"; done >"$plat/${pl}_p${np}_one_per_node.hosts"
for i in $(seq 0 $((np - 1))); do echo "n0"; done >"$plat/${pl}_p${np}_one_node.hosts"
run() {  # placement platform-xml hostfile
  local out="$outdir/halo_${pl}_p${np}_d${d}_n${n}_k${k}_$1.txt" t0 status=0
  t0=$(date +%s)
  { echo "# bash bench/smpi/halo_placement.sh $pl $np $d $n $k: CARTPLAN_COST_MODEL=$r/cost_model_${pl}_p256.json smpirun -np $np -platform $2 -hostfile $3 \$(bazel info --config=smpi bazel-bin)/tools/halo --dims $d --n $n --halo $k --periodic 1 --iters 4 --timing blocks"
    CARTPLAN_COST_MODEL="$r/cost_model_${pl}_p256.json" timeout -k 30 "$limit" smpirun --log=xbt_cfg.thres:warning \
      --log=smpi_config.thres:warning -np "$np" -platform "$2" -hostfile "$3" "$bin/tools/halo" --dims "$d" --n "$n" \
      --halo "$k" --periodic 1 --iters 4 --timing blocks || status=$?
    echo "# wall $(($(date +%s) - t0)) s, exit status $status"; } >"$out" 2>&1
  printf '| %s | halo placement %s %s p=%s d=%s n=%s k=%s | %s | %s |\n' "$(date -u -d @"$t0" +%H:%M:%S)" "$1" "$pl" "$np" "$d" "$n" "$k" \
    $(($(date +%s) - t0)) "$([ "$status" = 0 ] && echo done || echo "DID NOT FINISH (status $status, limit $limit s)")" >>"$r/scale_log.md"
}
run block "$plat/${pl}_p${np}.xml" "$plat/${pl}_p${np}.hosts"
run one_per_node "$plat/${pl}_p${wide}.xml" "$plat/${pl}_p${np}_one_per_node.hosts"
run one_node "$plat/${pl}_p${np}.xml" "$plat/${pl}_p${np}_one_node.hosts"
