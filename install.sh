#!/usr/bin/env bash
# Installs cartplan into PREFIX for use from any build system:
#   PREFIX/lib/libcartplan.so.X.Y.Z (SONAME libcartplan.so.X, only the public API exported),
#   libcartplan.so.X and libcartplan.so links, libcartplan.a, libcartplan_f08.a (Fortran module),
#   PREFIX/include/cartplan/{cartplan_mpi.h,cartplan.hpp}, include/cartplan/fortran/cartplan_f08.mod,
#   PREFIX/bin/cartplan, PREFIX/lib/pkgconfig/{cartplan,cartplan-f08}.pc and
#   PREFIX/lib/cmake/cartplan/cartplan{Config,ConfigVersion}.cmake.
#
#   bash install.sh PREFIX          # e.g. bash install.sh "$HOME/.local" or /usr/local
#   bash install.sh --smpi PREFIX   # the SMPI build instead (backends/dist/install_smpi.sh, docs/smpi.md)
#
# Builds with Bazel (the workspace's toolchain and flags; BAZEL_FLAGS adds more, e.g. "-c opt")
# and compiles the Fortran module with mpif90. Run setup.sh first on a fresh machine.
set -euo pipefail

if [ $# -eq 2 ] && [ "$1" = "--smpi" ] && [ -n "$2" ] && [ "${2#-}" = "$2" ]; then
  mkdir -p "$2"
  exec bash "$(cd "$(dirname "$0")" && pwd)/backends/dist/install_smpi.sh" "$(cd "$2" && pwd)"
fi
if [ $# -ne 1 ] || [ -z "$1" ] || [ "${1#-}" != "$1" ]; then
  echo "usage: bash install.sh PREFIX   or   bash install.sh --smpi PREFIX" >&2
  exit 2
fi
root="$(cd "$(dirname "$0")" && pwd)"
cd "$root"
mkdir -p "$1"
prefix="$(cd "$1" && pwd)"

version=$(sed -n 's/^CARTPLAN_VERSION = "\(.*\)"$/\1/p' tools/build_defs/version.bzl)
soversion=$(sed -n 's/^CARTPLAN_SOVERSION = "\(.*\)"$/\1/p' tools/build_defs/version.bzl)
[ -n "$version" ] && [ -n "$soversion" ] || { echo "install.sh: cannot read the version from tools/build_defs/version.bzl" >&2; exit 1; }

# shellcheck disable=SC2086
bazel build ${BAZEL_FLAGS:-} --ui_event_filters=-info,-stdout,-stderr --noshow_progress //backends/dist:libcartplan.so //tools:cartplan
# shellcheck disable=SC2086
bin="$(bazel info ${BAZEL_FLAGS:-} bazel-bin 2>/dev/null)"
execroot="$(bazel info ${BAZEL_FLAGS:-} execution_root 2>/dev/null)"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

mkdir -p "$prefix/bin" "$prefix/lib/pkgconfig" "$prefix/lib/cmake/cartplan" "$prefix/include/cartplan/fortran"

# Shared library: Bazel linked it with -soname and the version script (backends/dist/cartplan.map).
install -m 755 "$bin/backends/dist/libcartplan.so" "$prefix/lib/libcartplan.so.$version"
ln -sfn "libcartplan.so.$version" "$prefix/lib/libcartplan.so.$soversion"
ln -sfn "libcartplan.so.$soversion" "$prefix/lib/libcartplan.so"

# Static library: the same object files Bazel linked into the shared one (its link parameters).
params="$bin/backends/dist/libcartplan.so-2.params"
[ -f "$params" ] || { echo "install.sh: $params not found (Bazel changed its output layout?)" >&2; exit 1; }
mapfile -t objects < <(grep -E '\.o$' "$params")
[ "${#objects[@]}" -gt 0 ] || { echo "install.sh: no object files in $params" >&2; exit 1; }
rm -f "$work/libcartplan.a"
(cd "$execroot" && ar rcs "$work/libcartplan.a" "${objects[@]}")
install -m 644 "$work/libcartplan.a" "$prefix/lib/libcartplan.a"

install -m 644 backends/mpi/cartplan_mpi.h backends/mpi/cartplan.hpp "$prefix/include/cartplan/"
install -m 755 "$bin/tools/cartplan" "$prefix/bin/cartplan"

# Fortran module (mpi_f08): compiled here because .mod files belong to one compiler.
mkdir -p "$work/f08"
mpif90 -O2 -c backends/fortran/cartplan_f08.f90 -J "$work/f08" -o "$work/f08/cartplan_f08.o"
ar rcs "$work/f08/libcartplan_f08.a" "$work/f08/cartplan_f08.o"
install -m 644 "$work/f08/libcartplan_f08.a" "$prefix/lib/libcartplan_f08.a"
install -m 644 "$work/f08/cartplan_f08.mod" "$prefix/include/cartplan/fortran/cartplan_f08.mod"
fc_id="$(mpif90 --version | head -n 1)"

fill() {  # template output
  sed -e "s|@PREFIX@|$prefix|g" -e "s|@VERSION@|$version|g" -e "s|@SOVERSION@|$soversion|g" -e "s|@FC_ID@|$fc_id|g" "$1" >"$2"
  chmod 644 "$2"
}
fill backends/dist/cartplan.pc.in "$prefix/lib/pkgconfig/cartplan.pc"
fill backends/dist/cartplan-f08.pc.in "$prefix/lib/pkgconfig/cartplan-f08.pc"
fill backends/dist/cartplanConfig.cmake.in "$prefix/lib/cmake/cartplan/cartplanConfig.cmake"
fill backends/dist/cartplanConfigVersion.cmake.in "$prefix/lib/cmake/cartplan/cartplanConfigVersion.cmake"

echo "install.sh: installed cartplan $version into $prefix"
echo "  C:       mpicc prog.c \$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs cartplan)"
echo "  CMake:   cmake -DCMAKE_PREFIX_PATH=$prefix ...   # find_package(cartplan CONFIG), target cartplan::cartplan"
echo "  Fortran: mpif90 prog.f90 \$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs cartplan-f08)"
