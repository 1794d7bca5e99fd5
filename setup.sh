#!/usr/bin/env bash
# Installs every system package cartplan needs on Debian (idempotent; safe to run again).
# Bazel 4.2.3 (bazel-bootstrap), a C++20 compiler, Open MPI, nlohmann_json and doctest.
set -euo pipefail

packages=(bazel-bootstrap g++ libopenmpi-dev openmpi-bin nlohmann-json3-dev doctest-dev python3)

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
