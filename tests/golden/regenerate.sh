#!/usr/bin/env bash
# Rewrites the golden plans in tests/golden/ from MANIFEST with the current `cartplan`.
# Run it only when a plan change is intended, and review the diff before committing.
set -euo pipefail
cd "$(dirname "$0")/../.."
bazel build //tools:cartplan
while IFS=$'\t' read -r name args; do
  case "$name" in ''|'#'*) continue ;; esac
  # shellcheck disable=SC2086  # arguments are whitespace-separated by design
  bazel-bin/tools/cartplan plan $args > "tests/golden/$name.json"
  echo "wrote tests/golden/$name.json"
done < tests/golden/MANIFEST
