#!/usr/bin/env bash
# The main job (tools/halo: 3-D 27-point or, with DIMS=2, 2-D 9-point Jacobi, periodic, checked bit
# for bit) at p ranks on one platform, with that platform's p = 256 model, timed back to back
# (--timing blocks: sync undercounts at this scale, docs/smpi.md "Timing"), under a wall-time limit.
#   bash bench/smpi/halo_scale.sh PLATFORM NP N HALO [LIMIT_S]          # -> bench/results/smpi/halo_<platform>_p<np>_n<N>_k<HALO>.txt
#   DIMS=2 bash bench/smpi/halo_scale.sh PLATFORM NP N HALO [LIMIT_S]   # -> bench/results/smpi/halo_<platform>_p<np>_d2_n<N>_k<HALO>.txt
# DIMS=3 given explicitly names the file ..._d3_... (the sweep of bench/smpi/halo_sweep.sh).
# HALO_ARGS: more options for tools/halo (e.g. "--tune measure"); HALO_OUT_DIR: where the file
# goes instead of bench/results/smpi (bench/smpi/measure_mode.sh sets both); HALO_MODEL: the model
# file instead of the platform's committed p = 256 one. SMPI_COLLECTIVES=logp: the global
# collectives (the untimed barrier before each variant, init's agreement) with Open MPI's log-p
# algorithms (bench/smpi/logp_collectives.sh) instead of SMPI's default ones. UNEVEN=1: N is the
# global interior per dimension, cut into blocks (tools/halo --global N: interiors differ between
# ranks where N is no multiple of the grid), and the file is ..._g<N>_k<HALO>.txt.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
pl=$1 np=$2 n=$3 k=$4 limit=${5:-300}
d=${DIMS:-3}
r=bench/results/smpi
size=(--n "$n") tag=n
[ "${UNEVEN:-0}" = 1 ] && size=(--global "$n") tag=g
out="${HALO_OUT_DIR:-$r}/halo_${pl}_p${np}${DIMS:+_d$d}_${tag}${n}_k${k}.txt"
extra=${HALO_ARGS:-}
model="${HALO_MODEL:-$r/cost_model_${pl}_p256.json}"  # HALO_MODEL: another model file
# HALO_BIN_DIR: a directory holding an SMPI build's tools/halo (a sweep builds once; no bazel here).
if [ -n "${HALO_BIN_DIR:-}" ]; then
  bin="$HALO_BIN_DIR"
else
  bazel build --config=smpi --ui_event_filters=-info,-stdout,-stderr --noshow_progress //tools:halo
  bin="$(bazel info --config=smpi bazel-bin 2>/dev/null)"
fi
python3 bench/smpi/platforms.py "$pl" --np "$np" --out-dir out/smpi/platforms >/dev/null
plat=(-platform "out/smpi/platforms/${pl}_p${np}.xml" -hostfile "out/smpi/platforms/${pl}_p${np}.hosts")
coll=()
case "${SMPI_COLLECTIVES:-default}" in
  default) ;;
  logp) source bench/smpi/logp_collectives.sh; coll=("${logp_collectives[@]}") ;;
  *) echo "halo_scale.sh: SMPI_COLLECTIVES must be default or logp" >&2; exit 2 ;;
esac
t0=$(date +%s) status=0
{ echo "# CARTPLAN_COST_MODEL=$model smpirun ${coll[*]}${coll:+ }-np $np ${plat[*]} \$(bazel info --config=smpi bazel-bin)/tools/halo --dims $d ${size[*]} --halo $k --periodic 1 --iters 4 --timing blocks${extra:+ $extra}"
  CARTPLAN_COST_MODEL="$model" timeout -k 30 "$limit" smpirun --log=xbt_cfg.thres:warning --log=smpi_config.thres:warning "${coll[@]}" -np "$np" "${plat[@]}" \
    "$bin/tools/halo" --dims "$d" "${size[@]}" --halo "$k" --periodic 1 --iters 4 --timing blocks $extra || status=$?
  echo "# wall $(($(date +%s) - t0)) s, exit status $status$([ "$status" = 124 ] && echo ": DID NOT FINISH within $limit s")"; } >"$out" 2>&1
printf '| %s | halo %s p=%s %s=%s k=%s | %s | %s |\n' "$(date -u -d @"$t0" +%H:%M:%S)" "$pl" "$np${DIMS:+ d=$d}" "$tag" "$n" "$k" $(($(date +%s) - t0)) \
  "$([ "$status" = 0 ] && echo done || echo "DID NOT FINISH (status $status, limit $limit s)")" >>"$r/scale_log.md"
