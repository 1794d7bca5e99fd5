#!/usr/bin/env bash
# bench/results/smpi/phase_overlap.md: the phase-overlap judgement on the committed main-job runs, offline
# (no simulation): bench/smpi/overlap_replay.py's table of phase-cost forms and price sets, its list of the
# changed picks for the kept form, and halo_replay.py's replay of the library's own choice with the models of
# bench/results/smpi/phase_overlap/ (written by overlap_replay.py --write-models) against the committed ones.
#   bash bench/smpi/phase_overlap_report.sh CARTPLAN_BIN     # a cartplan built from this tree
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
bin=$1
r=bench/results/smpi
files=$(ls $r/halo_*_p*_n*_k*.txt | grep -v _sync)
fractions=0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9
{ echo "# Phase overlap: on-node and off-node sends of one phase priced as concurrent"
  echo
  echo "\`bash bench/smpi/phase_overlap_report.sh bazel-bin/tools/cartplan\` (offline: the committed main-job runs, no"
  echo "simulation). The text around the tables is in \`phase_overlap_notes.md\`."
  echo
  echo "## Forms and price sets over every committed main-job point"
  echo
  echo "\`python3 bench/smpi/overlap_replay.py --cartplan BIN --fractions $fractions FILES\` (FILES: the"
  echo "\`halo_*_p*_n*_k*.txt\` of halo_vs_linear.md)"
  echo
  # shellcheck disable=SC2086
  python3 bench/smpi/overlap_replay.py --cartplan "$bin" --fractions "$fractions" $files
  echo
  echo "## The kept form: the changed picks"
  echo
  echo "\`python3 bench/smpi/overlap_replay.py --cartplan BIN --fractions 0.5 --list FILES\`, rows of \`refit+lo | overlap 0.5\`"
  echo "(point, library pick measured -> new pick measured, best and loop us, the new predictions)"
  echo
  # shellcheck disable=SC2086
  python3 bench/smpi/overlap_replay.py --cartplan "$bin" --fractions 0.5 --list $files |
    awk '/^\| refit\+lo \| overlap 0.5/{f=1; print; next} f && /^\| (committed|nic|refit)/{f=0} f'
  for dir in "$r" "$r/phase_overlap"; do
    echo
    echo "## The library's choice replayed: models of \`$dir\`"
    echo
    echo "\`python3 bench/smpi/halo_replay.py --cartplan BIN --model-dir $dir FILES\`"
    echo
    # shellcheck disable=SC2086
    python3 bench/smpi/halo_replay.py --cartplan "$bin" --model-dir "$dir" $files
  done; } >"$r/phase_overlap.md"
echo "wrote $r/phase_overlap.md"
