#!/usr/bin/env bash
# The first committed SMPI run (bench/results/smpi/): on each platform at NP ranks (default 64),
# the cost model fitted there by calibrate (SMPI build, as cartplan-calibrate), a few sweep points of
# collective_bench with that model (bench/smpi/sweep.sh) and the main job (tools/halo). It proves
# the pipeline; the full sweeps to 4096 ranks run the same scripts with other arguments.
#
#   bash bench/smpi/first_run.sh            # NP=64; PLATFORMS="torus fattree dragonfly"
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
np="${NP:-64}"
results=bench/results/smpi
mkdir -p "$results" out/smpi/platforms
bazel build --config=smpi --ui_event_filters=-info,-stdout,-stderr --noshow_progress //bench:calibrate //bench:collective_bench //tools:halo
bin="$(bazel info --config=smpi bazel-bin 2>/dev/null)"
shown='$(bazel info --config=smpi bazel-bin)'  # how the commands below name $bin
quiet=(--log=xbt_cfg.thres:warning --log=smpi_config.thres:warning)

for platform in ${PLATFORMS:-torus fattree dragonfly}; do
  python3 bench/smpi/platforms.py "$platform" --np "$np" --out-dir out/smpi/platforms >/dev/null
  plat=(-platform "out/smpi/platforms/${platform}_p${np}.xml" -hostfile "out/smpi/platforms/${platform}_p${np}.hosts")
  model="$results/cost_model_${platform}_p${np}.json"
  # The model: calibrate under smpirun on this platform (what cartplan-calibrate runs).
  { echo "# python3 bench/smpi/platforms.py $platform --np $np --out-dir out/smpi/platforms"
    echo "# smpirun -np $np ${plat[*]} $shown/bench/calibrate --out $model"
    smpirun "${quiet[@]}" -np "$np" "${plat[@]}" "$bin/bench/calibrate" --out "$model"; } >"$results/calibrate_${platform}_p${np}.txt"
  # A few sweep points with that model (one table for all platforms).
  for point in "box:d=3,n=3,f=-1 alltoall 1,10,100,1000" "box:d=3,n=3,f=-1 alltoallv 1,10,100" \
               "box:d=3,n=3,f=-1 allgather 1,100" "vonneumann:d=3,r=1 alltoall 1,1000"; do
    read -r stencil op ms <<<"$point"
    bash bench/smpi/sweep.sh --platform "$platform" --np "$np" --stencil "$stencil" --op "$op" --m "$ms" --model "$model" \
      --out "$results/sweep_p${np}.md"
  done
  # The main job (3-D 27-point Jacobi, periodic) with the calibrated model.
  { echo "# CARTPLAN_COST_MODEL=$model smpirun -np $np ${plat[*]} $shown/tools/halo --dims 3 --n 16 --periodic 1 --iters 20"
    CARTPLAN_COST_MODEL="$model" smpirun "${quiet[@]}" -np "$np" "${plat[@]}" "$bin/tools/halo" --dims 3 --n 16 --periodic 1 --iters 20
  } >"$results/halo_${platform}_p${np}.txt"
done
echo "first_run.sh: results in $results"
