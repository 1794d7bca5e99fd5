#!/usr/bin/env bash
# Whether any price of phase_max_us_per_byte would help auto on the committed SMPI runs, without
# simulating again (simulated times do not depend on the model): per platform and price, the
# platform's committed models (p = 64 and 256) with the term set to that price and every other price
# as calibrated, replayed on the collective sweeps (bench/term_evidence.py --smpi-only: auto within
# 5 % of the best measured candidate with the term and without it; sweep_p256_b2b.md's rows replace
# the sync rows of the same points) and on the halo runs (bench/smpi/halo_replay.py: the halo API's
# pick within 5 % of the best variant; the runs used the p = 256 models at p = 64 too).
# BIN: tools/cartplan built at 2fa4fde, which has the term (tried there, not kept: docs/cost-model.md):
#   git worktree add /tmp/cp-2fa4fde 2fa4fde && (cd /tmp/cp-2fa4fde && bazel build //tools:cartplan)
#   bash bench/research/phase_max_scan.sh /tmp/cp-2fa4fde/bazel-bin/tools/cartplan [PRICES]   # "0.0005 0.001 .."
# MODELS_DIR (environment): replay DIR/cost_model_<platform>_p256.json instead (a model fitted with the
# term, e.g. by phase_max_run.sh, copied to the committed model's name), priced as fitted: one row
# per platform that has one. LIST=1: also every changed collective pick (term_evidence.py --list) and
# every halo run the pick misses, after the table.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
bin=$1 prices=${2:-0.00025 0.0005 0.001 0.002 0.004}
r=bench/results/smpi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
halo_runs=$(ls $r/halo_*_p*_d*_n*_k*.txt | grep -E "_k[0-9]+\.txt$")
echo "| platform | phase_max_us_per_byte | sweeps: auto within 5 % with the term / without | halo: within 5 % with the term / without |"
echo "|---|---|---|---|"
for pl in torus fattree dragonfly; do
  without=$(python3 bench/smpi/halo_replay.py --cartplan "$bin" $(echo "$halo_runs" | grep "halo_${pl}_") | tail -1 | grep -oE "[0-9]+ of [0-9]+")
  [ -z "${MODELS_DIR:-}" ] || [ -f "$MODELS_DIR/cost_model_${pl}_p256.json" ] || continue
  for price in $([ -n "${MODELS_DIR:-}" ] && echo fitted || echo "$prices"); do
    dir="$tmp/$pl-$price"
    mkdir -p "$dir"
    if [ "$price" = fitted ]; then
      cp "$MODELS_DIR/cost_model_${pl}_p256.json" "$dir/"
      price="$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['phase_max_us_per_byte'])" "$dir/cost_model_${pl}_p256.json") (fitted)"
    else
      for f in $r/cost_model_${pl}_p64.json $r/cost_model_${pl}_p256.json; do
        python3 -c "import json,sys; j=json.load(open(sys.argv[1])); j['phase_max_us_per_byte']=float(sys.argv[2]); json.dump(j, open(sys.argv[3], 'w'))" \
          "$f" "$price" "$dir/$(basename "$f")"
      done
    fi
    PYTHONPATH=bench python3 bench/term_evidence.py --cartplan "$bin" --smpi-only --smpi-models "$dir" \
      --terms phase_max_us_per_byte ${LIST:+--list} >"$tmp/sweeps.txt"
    python3 bench/smpi/halo_replay.py --cartplan "$bin" --model-dir "$dir" $(echo "$halo_runs" | grep "halo_${pl}_") >"$tmp/halo.txt"
    [ -z "${LIST:-}" ] || { echo "$pl at $price:"; grep "^  " "$tmp/sweeps.txt" || true; grep miss "$tmp/halo.txt" || true; } >>"$tmp/list.txt"
    sweeps=$(tail -1 "$tmp/sweeps.txt" | sed -E 's/.*with the term at ([0-9]+ of [0-9]+) points, without it at ([0-9]+ of [0-9]+)/\1 \/ \2/')
    halo=$(tail -1 "$tmp/halo.txt" | grep -oE "[0-9]+ of [0-9]+")
    echo "| $pl | $price | $sweeps | $halo / $without |"
  done
done
[ -z "${LIST:-}" ] || { echo; cat "$tmp/list.txt"; }
