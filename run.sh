#!/usr/bin/env bash
# The main job: install what is missing, then plan and simulate a halo exchange on a default
# stencil with the cartplan inspector. (The MPI halo-exchange program replaces this once the
# MPI backend lands.) Extra arguments go to `cartplan simulate`.
set -euo pipefail
cd "$(dirname "$0")"
bash ./setup.sh >/dev/null

stencil=moore:d=3,r=1
echo "== cartplan plan --op alltoall --stencil $stencil --format text"
bazel run --ui_event_filters=-info,-stdout,-stderr --noshow_progress //tools:cartplan -- \
  plan --op alltoall --stencil "$stencil" --format text
echo
echo "== cartplan simulate (alltoall, 8x8x8 mesh, every rank checked)"
bazel-bin/tools/cartplan simulate --op alltoall --stencil "$stencil" --dims 8,8,8 --periods 0,0,0 --format text "$@"
echo
echo "== cartplan simulate (allgather, 8x8x8 torus)"
bazel-bin/tools/cartplan simulate --op allgather --stencil "$stencil" --dims 8,8,8 --format text "$@"
