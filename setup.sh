#!/usr/bin/env bash
# Installs every system package that test.sh, run.sh, bench/run.sh and install.sh (and the
# scripts they call) use, on Debian (idempotent; safe to run again). test.sh checks that every
# external command those scripts run comes from a package below (tests/setup_check.sh).
set -euo pipefail

packages=(
  bazel-bootstrap g++ make binutils        # the build (Bazel 4.2.3) and the static library (ar)
  libopenmpi-dev openmpi-bin                # Open MPI: headers, mpicc/mpif90 wrappers, mpirun
  libsimgrid-dev                            # SimGrid's SMPI (3.32): smpicc, smpicxx, smpirun (--config=smpi, docs/smpi.md)
  nlohmann-json3-dev doctest-dev            # header-only dependencies
  clang libclang-rt-14-dev                  # libFuzzer targets (tests/fuzz/run.sh)
  valgrind                                  # //tests/mpi:valgrind_test
  gfortran cmake pkg-config                 # consumers of the installed library (tests/consumers)
  python3 gnuplot-nox git                   # bench/run.sh (analysis, plots, provenance)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup.sh: all packages present (${packages[*]})"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup.sh: installing ${missing[*]}"
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
