#!/usr/bin/env bash
# bench/results/smpi/halo_api.md and the plots halo_api_p<P>.png from every halo_<platform>_p<P>_d<D>_n<N>_k<K>.txt
# (bench/smpi/halo_sweep.sh's runs), one table per p.
#   bash bench/smpi/halo_report.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
r=bench/results/smpi
{ echo "# Issue 33 under SMPI: the halo API's auto against every variant"
  echo
  echo "\`bash bench/smpi/halo_report.sh\` over the runs of \`bash bench/smpi/halo_sweep.sh P\` (each raw output starts with its"
  echo "command; wall times in \`scale_log.md\`). Simulated us per exchange, back to back (max over ranks of the mean of"
  echo "4 exchanges after 5 warm-ups and an untimed barrier), \`measured (predicted)\`; the model is the platform's p = 256"
  echo "calibration. Variants: the halo API's auto (persistent), its blocking form, the halo API forced to direct,"
  echo "combining and dimwise, Cart_alltoallw auto/direct/combining/hybrid/log-round (persistent and auto blocking),"
  echo "the hand-written dimension-by-dimension exchange and the linear Isend/Irecv loop (MPI_Neighbor_alltoallw is not"
  echo "available under SMPI). Periodic grids; every variant checked bit for bit against a serial run."
  echo "The summary is in \`halo_summary.md\`."
  for p in 64 256; do
    files=$(ls $r/halo_*_p${p}_d*_n*_k*.txt 2>/dev/null | grep -v _sync || true)
    [ -n "$files" ] || continue
    echo
    echo "## p = $p"
    echo
    # shellcheck disable=SC2086
    python3 bench/smpi/halo_table.py $files
    # shellcheck disable=SC2086
    python3 bench/smpi/halo_plot.py "$p" $files >/dev/null && echo && echo "Plot: \`halo_api_p$p.png\`."
  done; } >"$r/halo_api.md"
echo "wrote $r/halo_api.md"
