#!/usr/bin/env bash
# Issues 30 and 33: measuring mode (Info cartplan_tune = measure) under SMPI at the points where
# the cost model's pick missed the best simulated variant by more than 5 %. The halo API's auto
# request is made with `--tune measure` (tools/halo), each run logged to
# bench/results/smpi/measure_mode/ (CARTPLAN_VERBOSE=1: the trials' medians are in the file);
# the Cartesian points run bench/smpi/sweep.sh with CARTPLAN_TUNE=measure (the auto persistent
# request measures). One simulation at a time; STOP (HH:MM, UTC) is when no new one starts.
# Tabulated by hand in bench/results/smpi/measure_mode.md.
#   bash bench/smpi/measure_mode.sh [STOP] [halo|sweep|all]
#   MEASURE_HALO=hits64 bash bench/smpi/measure_mode.sh [STOP] halo   # the p = 64 points that were hits
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
stop=${1:-} what=${2:-all}
out=${MEASURE_OUT:-bench/results/smpi/measure_mode}  # MEASURE_OUT: another directory for the files
mkdir -p "$out"
late() { [ -n "$stop" ] && [ "$(date -u +%H:%M)" \> "$stop" ]; }
# The halo misses of halo_summary.md: PLATFORM:NP:D:N:K.
halo_points="torus:64:2:64:3 torus:64:2:256:1 torus:64:2:256:3 dragonfly:64:2:256:1 dragonfly:64:2:256:3
torus:256:2:64:3 fattree:256:2:256:3 torus:256:2:256:1 dragonfly:256:2:256:1 torus:256:2:256:3 dragonfly:256:3:8:3"
# The points where the model's pick was within 5 % at p = 64 (does measuring keep them?), 3-D n = 64
# left out (wall time): MEASURE_HALO=hits64.
# MEASURE_POINTS: the halo points to run instead (PLATFORM:NP:D:N:K ...).
[ -n "${MEASURE_POINTS:-}" ] && halo_points=$MEASURE_POINTS
if [ "${MEASURE_HALO:-misses}" = hits64 ]; then
  halo_points=""
  for pl in fattree torus dragonfly; do
    for dnk in 2:8:1 2:8:3 2:64:1 2:64:3 2:256:1 2:256:3 3:8:1 3:8:3; do
      case "$pl:64:$dnk" in torus:64:2:64:3|torus:64:2:256:1|torus:64:2:256:3|dragonfly:64:2:256:1|dragonfly:64:2:256:3) continue ;; esac
      halo_points="$halo_points $pl:64:$dnk"
    done
  done
fi
if [ "$what" != sweep ]; then
  bin_dir="$(mktemp -d "${TMPDIR:-/tmp}/measure_mode.XXXXXX")"
  mkdir -p "$bin_dir/tools"
  if [ -n "${HALO_BIN:-}" ]; then  # an SMPI build of tools/halo already made (no bazel here)
    cp "$HALO_BIN" "$bin_dir/tools/halo"
  else
    bazel build --config=smpi --ui_event_filters=-info,-stdout,-stderr --noshow_progress //tools:halo || exit 1
    cp "$(bazel info --config=smpi bazel-bin 2>/dev/null)/tools/halo" "$bin_dir/tools/halo"
  fi
  for point in $halo_points; do
    IFS=: read -r pl np d n k <<<"$point"
    if late; then echo "measure_mode: $stop passed, not starting halo $point"; continue; fi
    echo "measure_mode: $(date -u +%H:%M:%S) halo $point"
    CARTPLAN_VERBOSE=1 DIMS=$d HALO_BIN_DIR="$bin_dir" HALO_OUT_DIR="$out" HALO_ARGS="--tune measure" \
      bash bench/smpi/halo_scale.sh "$pl" "$np" "$n" "$k" 600
  done
  rm -rf "$bin_dir"
fi
# Cartesian sweep misses (summary.md): the back-to-back ones (torus box d = 2 at m = 100, the one
# that stands; fat tree von Neumann d = 3 at m = 1000) and box d = 3 (a sync miss, a hit back to
# back); sync misses at m = 100 on each platform. Options as the committed runs had them
# (sweep_p256*.txt). PLATFORM/STENCIL/M/MEASURE.
sweep_points="torus/box:d=2,n=3,f=-1/100/b2b fattree/vonneumann:d=3,r=1/1000/b2b torus/box:d=3,n=3,f=-1/100/b2b
torus/box:d=2,n=3,f=-1/100/sync dragonfly/box:d=2,n=3,f=-1/100/sync fattree/box:d=3,n=3,f=-1/100/sync
torus/moore:d=2,r=2/100/sync dragonfly/vonneumann:d=3,r=2/100/sync torus/box:d=3,n=3,f=-1/100/sync"
variants=linear,cart_auto_persistent,cart_auto_blocking,cart_direct_persistent,cart_combining_persistent,cart_hybrid_persistent,cart_loground_persistent
[ "$what" = halo ] && exit 0
for point in $sweep_points; do
  IFS=/ read -r pl st m measure <<<"$point"
  if late; then echo "measure_mode: $stop passed, not starting sweep $point"; continue; fi
  echo "measure_mode: $(date -u +%H:%M:%S) sweep $point"
  iters=1 warmup=0
  [ "$measure" = b2b ] && iters=4 warmup=2
  CARTPLAN_TUNE=measure CARTPLAN_VERBOSE=1 bash bench/smpi/sweep.sh --platform "$pl" --np 256 --stencil "$st" --op alltoall \
    --m "$m" --iters "$iters" --warmup "$warmup" --model "bench/results/smpi/cost_model_${pl}_p256.json" --variants "$variants" \
    --measure "$measure" --limit 900 --out "$out/sweep_p256_$measure.md" >>"$out/sweep_p256_$measure.log" 2>&1
done
