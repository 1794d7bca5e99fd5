#!/usr/bin/env bash
# The phase_max_us_per_byte term judged on the SMPI platforms at p = 256 (bench/results/smpi/phase_max.md):
#   calibrate: re-fit each platform's p = 256 model with the term (the three calibrations side by
#              side, the arguments of scale_run.sh's) -> cost_model_<platform>_p256_phasemax.json
#              and calibrate_<platform>_p256_phasemax.txt;
#   sweep:     the collective sweep points of points/phase_max.txt with those models (sync, seven
#              variants, one call each: sweep_p256_phasemax.md) and the back-to-back check points
#              (sweep_p256_phasemax_b2b.md);
#   halo:      the halo main job's points HALO_POINTS (D:N:K ..) with those models
#              (halo_<platform>_p256_d<D>_n<N>_k<K>_phasemax.txt).
# Every simulation and its wall time goes to scale_log.md. STOP_AT (HH:MM UTC): start nothing after it.
#
#   bash bench/smpi/phase_max_run.sh calibrate|sweep|halo
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
stage=${1:?calibrate, sweep or halo}
r=bench/results/smpi
stop_at=$(date -u -d "${STOP_AT:-23:59}" +%s)
# One copy of the SMPI binaries for the whole stage: later builds of either flavour move bazel-bin.
bazel build --config=smpi --ui_event_filters=-info,-stdout,-stderr --noshow_progress //bench:calibrate //bench:collective_bench //tools:halo || exit 1
bin_dir="$(mktemp -d "${TMPDIR:-/tmp}/phase_max_run.XXXXXX")"
mkdir -p "$bin_dir/bench" "$bin_dir/tools"
src="$(bazel info --config=smpi bazel-bin 2>/dev/null)"
cp "$src/bench/calibrate" "$src/bench/collective_bench" "$bin_dir/bench/" && cp "$src/tools/halo" "$bin_dir/tools/"
export SMPI_BIN_DIR="$bin_dir" HALO_BIN_DIR="$bin_dir"

calibrate() {  # one platform: what scale_sweep.sh --calibrate runs, to the _phasemax files
  local pl=$1 np=256 model="$r/cost_model_$1_p256_phasemax.json" t0 begin status=0
  python3 bench/smpi/platforms.py "$pl" --np $np --out-dir out/smpi/platforms >/dev/null
  local plat=(-platform "out/smpi/platforms/${pl}_p${np}.xml" -hostfile "out/smpi/platforms/${pl}_p${np}.hosts")
  begin=$(date -u +%H:%M:%S) t0=$(date +%s)
  { echo "# python3 bench/smpi/platforms.py $pl --np $np --out-dir out/smpi/platforms"
    echo "# smpirun -np $np ${plat[*]} \$(bazel info --config=smpi bazel-bin)/bench/calibrate --out $model --quick --specs 'box:d=2,n=3,f=-1;box:d=3,n=3,f=-1'"
    timeout -k 30 1500 smpirun --log=xbt_cfg.thres:warning --log=smpi_config.thres:warning -np $np "${plat[@]}" \
      "$bin_dir/bench/calibrate" --out "$model" --quick --specs 'box:d=2,n=3,f=-1;box:d=3,n=3,f=-1' || status=$?; } \
    >"$r/calibrate_${pl}_p256_phasemax.txt" 2>&1
  printf '| %s | calibrate %s p=%s --quick, box d = 2, 3 (phase_max) | %s | %s |\n' "$begin" "$pl" $np $(($(date +%s) - t0)) \
    "$([ "$status" = 0 ] && echo done || echo "DID NOT FINISH (status $status)")" >>"$r/scale_log.md"
}

case "$stage" in
  calibrate)
    for pl in torus fattree dragonfly; do calibrate $pl & done
    wait ;;
  sweep)
    for pl in torus fattree dragonfly; do
      STOP_AT=$stop_at bash bench/smpi/scale_sweep.sh --platform $pl --np 256 --limit 600 --iters 1 --warmup 0 \
        --model-file $r/cost_model_${pl}_p256_phasemax.json --out $r/sweep_p256_phasemax.md <bench/smpi/points/phase_max.txt
    done
    for pl in torus fattree dragonfly; do
      STOP_AT=$stop_at bash bench/smpi/scale_sweep.sh --platform $pl --np 256 --limit 300 --iters 4 --warmup 2 --measure b2b \
        --model-file $r/cost_model_${pl}_p256_phasemax.json --out $r/sweep_p256_phasemax_b2b.md <bench/smpi/points/phase_max_b2b.txt
    done ;;
  halo)
    for point in ${HALO_POINTS:-2:256:1 2:256:3 2:64:3}; do
      IFS=: read -r d n k <<<"$point"
      for pl in torus fattree dragonfly; do
        [ "$(date +%s)" -lt "$stop_at" ] || { echo "phase_max_run: out of time, not starting $pl d=$d n=$n k=$k"; continue; }
        DIMS=$d MODEL_TAG=_phasemax bash bench/smpi/halo_scale.sh "$pl" 256 "$n" "$k" 400
      done
    done ;;
  *) echo "phase_max_run.sh: unknown stage $stage (calibrate, sweep or halo)" >&2; exit 2 ;;
esac
rm -rf "$bin_dir"
