#!/usr/bin/env bash
# Would the placement terms (engine/placement.h: off-node messages and bytes, and the bytes a phase
# pushes through the most loaded node's link) help auto on the committed SMPI runs? Without simulating
# again (simulated times do not depend on the model), per platform, two models replace the committed
# p = 64 and p = 256 ones:
#   fitted: bench/research/placement_fit.py's offline re-fit of the committed calibrate_<platform>_p<P>.txt
#           rows with the placement counts (every term re-fitted; written to OUT/fitted/);
#   nic:    the committed model with node_link_us_per_byte = 1 / the platform's NIC bandwidth
#           (bench/smpi/platforms.py: a cited parameter, nothing fitted).
# Each is replayed on the collective sweeps (bench/term_evidence.py --smpi-only --terms placement: auto
# within 5 % of the best measured candidate with the terms and with them set to 0; sweep_p256_b2b.md's
# rows replace the sync rows of the same points) and on the halo runs (bench/smpi/halo_replay.py: the
# halo API's pick within 5 % of the best variant; the runs used the p = 256 models at p = 64 too).
# Every point is priced with its platform's cores per node as --ranks-per-node (block placement).
#   bash bench/research/placement_scan.sh BIN [OUT]     # BIN: tools/cartplan of this branch
# LIST=1: also every changed collective pick and every halo miss, after the table.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
bin=$1 out=${2:-$(mktemp -d)}
r=bench/results/smpi
halo_runs=$(ls $r/halo_*_p*_d*_n*_k*.txt | grep -E "_k[0-9]+\.txt$")
mkdir -p "$out/fitted" "$out/nic"
for pl in torus fattree dragonfly; do
  PYTHONPATH=bench python3 bench/research/placement_fit.py --cartplan "$bin" --out-dir "$out/fitted" \
    $r/calibrate_${pl}_p64.txt $r/calibrate_${pl}_p256.txt
  for f in $r/cost_model_${pl}_p64.json $r/cost_model_${pl}_p256.json; do
    python3 - "$f" "$pl" "$out/nic/$(basename "$f")" <<'PY'
import json, sys
sys.path.insert(0, "bench/smpi")
import platforms
j = json.load(open(sys.argv[1]))
key = "nic_bw" if sys.argv[2] == "torus" else "link_bw"
j["node_link_us_per_byte"] = 1e6 / platforms.value(sys.argv[2], key)
json.dump(j, open(sys.argv[3], "w"), indent=2)
PY
  done
done
echo
echo "| platform | model | sweeps: auto within 5 % with the terms / without | halo: within 5 % with the terms / committed model |"
echo "|---|---|---|---|"
for pl in torus fattree dragonfly; do
  committed=$(python3 bench/smpi/halo_replay.py --cartplan "$bin" $(echo "$halo_runs" | grep "halo_${pl}_") | tail -1 | grep -oE "[0-9]+ of [0-9]+")
  for mode in fitted nic; do
    dir="$out/$mode/$pl"
    mkdir -p "$dir"
    cp "$out/$mode/cost_model_${pl}_p64.json" "$out/$mode/cost_model_${pl}_p256.json" "$dir/"
    PYTHONPATH=bench python3 bench/term_evidence.py --cartplan "$bin" --smpi-only --smpi-models "$dir" \
      --terms placement ${LIST:+--list} >"$out/sweeps_${pl}_$mode.txt"
    python3 bench/smpi/halo_replay.py --cartplan "$bin" --model-dir "$dir" $(echo "$halo_runs" | grep "halo_${pl}_") \
      >"$out/halo_${pl}_$mode.txt"
    sweeps=$(tail -1 "$out/sweeps_${pl}_$mode.txt" | sed -E 's/.*with the term at ([0-9]+ of [0-9]+) points, without it at ([0-9]+ of [0-9]+)/\1 \/ \2/')
    halo=$(tail -1 "$out/halo_${pl}_$mode.txt" | grep -oE "[0-9]+ of [0-9]+")
    echo "| $pl | $mode | $sweeps | $halo / $committed |"
  done
done
if [ -n "${LIST:-}" ]; then
  for f in "$out"/sweeps_*.txt; do echo "$(basename "$f"):"; grep "^  " "$f" || true; done
  for f in "$out"/halo_*.txt; do echo "$(basename "$f"):"; grep miss "$f" || true; done
fi
