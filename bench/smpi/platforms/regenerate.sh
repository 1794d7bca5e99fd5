#!/usr/bin/env bash
# Rewrites the committed example platforms (64 and 4096 ranks on each platform) from
# bench/smpi/platforms.py; //bench/smpi:platforms_test checks they match the generator.
set -euo pipefail
cd "$(dirname "$0")"
for np in 64 4096; do
  for platform in torus fattree dragonfly; do python3 ../platforms.py "$platform" --np "$np" --out-dir .; done
done
