#!/usr/bin/env bash
# The re-fit of the SMPI platforms' p = 256 models with the phase_max_us_per_byte term (tried in
# 2fa4fde, not kept: docs/cost-model.md, bench/results/smpi/phase_max.md). Calibrates the platforms
# side by side with the arguments of bench/smpi/scale_run.sh's p = 256 calibrations, with BIN_DIR's
# bench/calibrate: an SMPI build of 2fa4fde (today's build has no such term), e.g.
#   git worktree add /tmp/cp-2fa4fde 2fa4fde && (cd /tmp/cp-2fa4fde && bazel build --config=smpi //bench:calibrate)
#   bash bench/research/phase_max_run.sh "$(cd /tmp/cp-2fa4fde && bazel info --config=smpi bazel-bin)"
#   TAG=_phasemax_m100 SIZES=1,100,1024,8192 PLATFORMS="torus dragonfly" bash bench/research/phase_max_run.sh BIN_DIR
# Writes bench/results/smpi/calibrate_<platform>_p256<TAG>.txt (TAG default _phasemax; the fitted
# model goes to out/phase_max/cost_model_<platform>_p256<TAG>.json: today's build cannot load a file
# with the term) and one line per calibration to bench/results/smpi/scale_log.md. SIZES (ints)
# replaces --quick's block sizes. The fat tree's largest rows (64000 ints) need about 12 GB: with
# two other calibrations beside it on a 24-GB machine it was killed once; run it alone.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
bin_dir=${1:?BIN_DIR: an SMPI build of 2fa4fde (see the header)}
r=bench/results/smpi
tag=${TAG:-_phasemax}
mkdir -p out/phase_max

calibrate() {  # one platform at p = 256
  local pl=$1 np=256 model="out/phase_max/cost_model_$1_p256$tag.json" t0 begin status=0
  local args=(--out "$model" --quick --specs 'box:d=2,n=3,f=-1;box:d=3,n=3,f=-1')
  [ -z "${SIZES:-}" ] || args+=(--sizes "$SIZES")
  python3 bench/smpi/platforms.py "$pl" --np $np --out-dir out/smpi/platforms >/dev/null
  local plat=(-platform "out/smpi/platforms/${pl}_p${np}.xml" -hostfile "out/smpi/platforms/${pl}_p${np}.hosts")
  begin=$(date -u +%H:%M:%S) t0=$(date +%s)
  { echo "# python3 bench/smpi/platforms.py $pl --np $np --out-dir out/smpi/platforms"
    echo "# smpirun -np $np ${plat[*]} BIN_DIR/bench/calibrate ${args[*]}   (BIN_DIR: an SMPI build of 2fa4fde)"
    timeout -k 30 2400 smpirun --log=xbt_cfg.thres:warning --log=smpi_config.thres:warning -np $np "${plat[@]}" \
      "$bin_dir/bench/calibrate" "${args[@]}" || status=$?; } >"$r/calibrate_${pl}_p256$tag.txt" 2>&1
  printf '| %s | calibrate %s p=%s %s (2fa4fde) | %s | %s |\n' "$begin" "$pl" $np "${args[*]:2}" $(($(date +%s) - t0)) \
    "$([ "$status" = 0 ] && echo done || echo "DID NOT FINISH (status $status)")" >>"$r/scale_log.md"
}

for pl in ${PLATFORMS:-torus fattree dragonfly}; do calibrate "$pl" & done
wait
