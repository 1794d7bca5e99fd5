#!/usr/bin/env bash
# The main job: install what is missing, build the halo-exchange program and run it under
# mpirun on 4 ranks (a 2-D 9-point Jacobi on a 2x2 mesh of 64x64 blocks, checked bit-for-bit
# against a serial run and timed: cartplan's halo API (Cart_halo_*, the plan its model picks) as
# the cartplan path, beside Cart_alltoallw's plans, a hand-written dimension-by-dimension exchange,
# the linear Isend/Irecv loop and MPI_Neighbor_alltoallw, with predictions and bytes per rank).
# Extra arguments go to the program (e.g. --dims 3 --periodic 1 --halo 2); NP=8 changes ranks.
set -euo pipefail
cd "$(dirname "$0")"
bash ./setup.sh >/dev/null
bazel build --ui_event_filters=-info,-stdout,-stderr --noshow_progress //tools:halo
# 2 cores: oversubscribe and yield when idle; root is how CI and fresh machines often run.
export OMPI_MCA_mpi_yield_when_idle=1
exec mpirun --oversubscribe --allow-run-as-root -np "${NP:-4}" bazel-bin/tools/halo "$@"
