#!/usr/bin/env bash
# Installs cartplan's SMPI build (bazel build --config=smpi, docs/smpi.md) into PREFIX; called by
# `bash install.sh --smpi PREFIX`:
#   PREFIX/lib/libcartplan-smpi.a       the library (position-independent, for smpicc/smpicxx programs)
#   PREFIX/include/cartplan/{cartplan_mpi.h,cartplan.hpp}
#   PREFIX/lib/pkgconfig/cartplan-smpi.pc
#   PREFIX/bin/cartplan-calibrate       bench/calibrate for smpirun: fits a cost model (--out FILE)
#   PREFIX/bin/cartplan                 the inspector (no MPI): cartplan plan --explain --cost-model FILE
#   PREFIX/share/cartplan/smpi/platforms.py   the platform generator (bench/smpi/platforms.py)
set -euo pipefail

prefix="$1"
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
version=$(sed -n 's/^CARTPLAN_VERSION = "\(.*\)"$/\1/p' tools/build_defs/version.bzl)
[ -n "$version" ] || { echo "install.sh --smpi: cannot read the version from tools/build_defs/version.bzl" >&2; exit 1; }
command -v smpicc >/dev/null || { echo "install.sh --smpi: smpicc not found (Debian: libsimgrid-dev; run setup.sh)" >&2; exit 1; }

flags=(--config=smpi ${BAZEL_FLAGS:-})
bazel build "${flags[@]}" --ui_event_filters=-info,-stdout,-stderr --noshow_progress \
  //backends/dist:libcartplan.so //bench:calibrate //tools:cartplan
bin="$(bazel info "${flags[@]}" bazel-bin 2>/dev/null)"
execroot="$(bazel info "${flags[@]}" execution_root 2>/dev/null)"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$prefix/bin" "$prefix/lib/pkgconfig" "$prefix/include/cartplan" "$prefix/share/cartplan/smpi"

# The archive: the objects Bazel linked into the SMPI flavour's shared library (its link parameters).
params="$bin/backends/dist/libcartplan.so-2.params"
[ -f "$params" ] || { echo "install.sh --smpi: $params not found (Bazel changed its output layout?)" >&2; exit 1; }
mapfile -t objects < <(grep -E '\.o$' "$params")
[ "${#objects[@]}" -gt 0 ] || { echo "install.sh --smpi: no object files in $params" >&2; exit 1; }
(cd "$execroot" && ar rcs "$work/libcartplan-smpi.a" "${objects[@]}")
install -m 644 "$work/libcartplan-smpi.a" "$prefix/lib/libcartplan-smpi.a"

install -m 644 backends/mpi/cartplan_mpi.h backends/mpi/cartplan.hpp "$prefix/include/cartplan/"
install -m 755 "$bin/bench/calibrate" "$prefix/bin/cartplan-calibrate"
install -m 755 "$bin/tools/cartplan" "$prefix/bin/cartplan"
install -m 644 bench/smpi/platforms.py "$prefix/share/cartplan/smpi/platforms.py"
sed -e "s|@PREFIX@|$prefix|g" -e "s|@VERSION@|$version|g" backends/dist/cartplan-smpi.pc.in >"$prefix/lib/pkgconfig/cartplan-smpi.pc"
chmod 644 "$prefix/lib/pkgconfig/cartplan-smpi.pc"

echo "install.sh: installed cartplan $version (SMPI) into $prefix"
echo "  C:         smpicc prog.c \$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs cartplan-smpi) -o prog"
echo "  platform:  python3 $prefix/share/cartplan/smpi/platforms.py torus --np 64 --out-dir ."
echo "  run:       smpirun -np 64 -platform torus_p64.xml -hostfile torus_p64.hosts ./prog"
echo "  calibrate: smpirun -np 64 -platform torus_p64.xml -hostfile torus_p64.hosts $prefix/bin/cartplan-calibrate --out model.json"
