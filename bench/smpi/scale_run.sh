#!/usr/bin/env bash
# The committed sweeps at scale (bench/results/smpi/sweep_p256.md, sweep_p256_b2b.md,
# sweep_p1024.md, scale_log.md): bench/smpi/scale_sweep.sh per platform and p, one simulation at
# a time, each phase with a deadline after which it starts no new point (the session had about
# 90 minutes of simulation on a shared 2-core machine, load 10-14). Calibration with --quick's
# three sizes and two of its neighbourhoods (box d = 2 and 3, n = 3): --quick's third, the deep
# box:d=2,n=7,f=-3, alone took over 5 minutes at p = 256 (scale_log.md). At p = 1024 no
# calibration: the p = 256 model of the platform.
# Timing: per variant one checked call, one call right after a barrier (the "b2b" columns: here a
# single call that includes the barrier's exit skew, NOT a back-to-back time) and the sync call, the
# measure (docs/smpi.md, "Timing"); no warm-up: the simulation is deterministic and has no caches.
# The b2b check times the points where sync and back-to-back may disagree with 2 warm-ups and 4
# back-to-back calls. The dragonfly p = 256 phase ran first with the box d = 3 alltoall at m = 1,
# 10, 100 (and 1000, stopped by hand), then points/broad_rest.txt; the others ran points/broad.txt.
#
#   bash bench/smpi/scale_run.sh            # DAY=YYYY-MM-DD for the deadlines (default today, UTC)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
day="${DAY:-$(date -u +%F)}"
by() { date -u -d "$day $1" +%s; }
pts=bench/smpi/points
common=(--iters 1 --warmup 0)
cal="--quick --specs box:d=2,n=3,f=-1;box:d=3,n=3,f=-1"
r=bench/results/smpi

if [ "${FROM:-dragonfly}" = dragonfly ]; then
  STOP_AT=$(by 03:41) bash bench/smpi/scale_sweep.sh --platform dragonfly --np 256 --limit 600 "${common[@]}" <$pts/broad_rest.txt
  STOP_AT=$(by 04:02) bash bench/smpi/scale_sweep.sh --platform torus --np 256 --calibrate "$cal" --limit 900 "${common[@]}" <$pts/broad.txt
fi
STOP_AT=$(by 04:14) bash bench/smpi/scale_sweep.sh --platform fattree --np 256 --calibrate "$cal" --limit 600 "${common[@]}" <$pts/broad.txt
for pl in torus dragonfly fattree; do
  STOP_AT=$(by 04:24) bash bench/smpi/scale_sweep.sh --platform $pl --np 256 --limit 300 --iters 4 --warmup 2 --measure b2b \
    --out $r/sweep_p256_b2b.md <$pts/b2b_check.txt
done
for pl in dragonfly torus fattree; do  # (box d = 3 at m = 100 was in p1024.txt for the first two: stopped by hand)
  STOP_AT=$(by 04:36) bash bench/smpi/scale_sweep.sh --platform $pl --np 1024 --limit 600 "${common[@]}" \
    --model-file $r/cost_model_${pl}_p256.json <$pts/p1024.txt
done
# Seed 000 at p = 1024 on the torus (4x4x4x4x4), with the p = 256 torus model; four variants.
STOP_AT=$(by 04:38) bash bench/smpi/scale_sweep.sh --platform torus --np 1024 --limit 720 "${common[@]}" \
  --variants linear,cart_auto_persistent,cart_direct_persistent,cart_combining_persistent \
  --model-file $r/cost_model_torus_p256.json <$pts/seed000.txt
# A second back-to-back check, then the dragonfly p = 256 points its phase skipped (the dragonfly
# ran first, under heavier load).
for pl in torus fattree dragonfly; do
  STOP_AT=$(by 04:41) bash bench/smpi/scale_sweep.sh --platform $pl --np 256 --limit 300 --iters 4 --warmup 2 --measure b2b \
    --out $r/sweep_p256_b2b.md <$pts/b2b_check2.txt
done
STOP_AT=$(by 04:43) bash bench/smpi/scale_sweep.sh --platform dragonfly --np 256 --limit 240 "${common[@]}" <$pts/dragonfly_rest.txt
