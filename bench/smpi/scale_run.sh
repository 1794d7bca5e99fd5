#!/usr/bin/env bash
# The committed sweeps at scale (bench/results/smpi/sweep_p256.md, sweep_p1024.md, scale_log.md):
# bench/smpi/scale_sweep.sh per platform and p, one simulation at a time, each phase with a
# deadline after which it starts no new point (the session had about 90 minutes of simulation
# on a shared 2-core machine). Calibration with --quick's three sizes and two of its neighbourhoods
# (box d = 2 and 3, n = 3): --quick's third, the deep box:d=2,n=7,f=-3, alone took over 5 minutes
# at p = 256 (scale_log.md).
# Timing: per variant one checked call, one call right after a barrier (the "b2b" columns: here a
# single call that includes the barrier's exit skew, NOT a back-to-back time) and the sync call, the
# measure (docs/smpi.md, "Timing"); no warm-up: the simulation is deterministic and has no caches.
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

STOP_AT=$(by 03:40) bash bench/smpi/scale_sweep.sh --platform dragonfly --np 256 --calibrate "$cal" --limit 900 "${common[@]}" <$pts/broad.txt
STOP_AT=$(by 04:00) bash bench/smpi/scale_sweep.sh --platform torus --np 256 --calibrate "$cal" --limit 900 "${common[@]}" <$pts/broad.txt
STOP_AT=$(by 04:15) bash bench/smpi/scale_sweep.sh --platform fattree --np 256 --calibrate "$cal" --limit 900 "${common[@]}" <$pts/broad.txt
# Seed 000 at p = 1024 on the torus (4x4x4x4x4), with the p = 256 torus model (no time to calibrate at 1024).
STOP_AT=$(by 04:30) bash bench/smpi/scale_sweep.sh --platform torus --np 1024 --limit 1200 "${common[@]}" \
  --variants linear,cart_auto_persistent,cart_direct_persistent,cart_combining_persistent \
  --model-file bench/results/smpi/cost_model_torus_p256.json <$pts/seed000.txt
STOP_AT=$(by 04:40) bash bench/smpi/scale_sweep.sh --platform dragonfly --np 1024 --limit 600 "${common[@]}" \
  --model-file bench/results/smpi/cost_model_dragonfly_p256.json <$pts/p1024.txt
