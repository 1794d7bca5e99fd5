#!/usr/bin/env bash
# Sourced by the bench scripts: build_copy DEST TARGET... builds the Bazel targets in the default
# configuration and copies their files into DEST, so that a rebuild during a run cannot change
# what is measured. A failing build prints its last lines and exits. The files come from
# `bazel info bazel-bin`, not the bazel-bin link, which points to the last build's tree (after a
# --config=asan build, the sanitized one).
#   source bench/build_copy.sh; build_copy "$work" //bench:osu_neighbor //backends/interpose:libcartplan_interpose.so
build_copy() {
  local dest=$1
  shift
  if ! bazel build "$@" > "$dest/build.log" 2>&1; then
    tail -n 30 "$dest/build.log" >&2
    echo "$(basename "$0"): bazel build failed (above)" >&2
    exit 1
  fi
  local bin target
  bin=$(bazel info bazel-bin 2>/dev/null)
  for target in "$@"; do
    target=${target#//}
    cp "$bin/${target/://}" "$dest"/
  done
}
