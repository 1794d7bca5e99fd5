#!/usr/bin/env bash
# bench/results/smpi/halo_api.md and the plots halo_api_p<P>.png from every halo_<platform>_p<P>_d<D>_n<N>_k<K>.txt
# (bench/smpi/halo_sweep.sh's runs), one table per p; and bench/results/smpi/halo_vs_linear.md from those and
# the main job's runs (bench/smpi/halo_scale.sh PLATFORM P 16 K: halo_<platform>_p<P>_n16_k<K>.txt), one table
# per platform: the main job's choice against the linear Isend/Irecv loop (issue 30's last criterion).
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
  echo "available under SMPI). Periodic grids. The last field of a row says how its data were checked (tools/halo --check, chosen by"
  echo "halo_sweep.sh from memory): \`OK (bit-for-bit)\`: every variant against a serial run after Jacobi sweeps;"
  echo "\`OK (bit-for-bit, one exchange, ...)\`: 3-D n = 256 at p = 64, where a serial 1024^3 run does not fit: one"
  echo "exchange per variant, every rank checks every cell it holds; \`NONE\`: 3-D n = 256 at p = 256, where 256 arrays"
  echo "of 137-144 MB do not fit: the ranks share one SMPI_SHARED_MALLOC array, so only the simulated times count"
  echo "(the same plans' data are checked at p = 64)."
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
  done
  big=$(ls $r/halo_*_p*_d3_n256_k*.txt 2>/dev/null || true)
  if [ -n "$big" ]; then
    echo
    echo "## 3-D n = 256: every halo plan, measured (predicted)"
    echo
    echo "\`python3 bench/smpi/halo_table.py --variants\` over the 3-D n = 256 runs (runs that did not finish have no row)."
    echo
    # shellcheck disable=SC2086
    python3 bench/smpi/halo_table.py --variants $big
  fi; } >"$r/halo_api.md"
echo "wrote $r/halo_api.md"
{ echo "# The main job at scale: cartplan's choice against the linear Isend/Irecv loop, per platform"
  echo
  echo "\`bash bench/smpi/halo_report.sh\` (\`python3 bench/smpi/halo_table.py --linear\` over every committed"
  echo "\`halo_<platform>_p<P>[_d<D>]_n<N>_k<K>.txt\`; each starts with its command, wall times in \`scale_log.md\`)."
  echo "Issue 30: \"The main job at scale shows, per platform, where cartplan's choice beats the linear loop and by"
  echo "how much, and is never slower than it by more than 5 %.\" cartplan's choice is the main job's cartplan path,"
  echo "the halo API's auto (\`Cart_halo_exchange_init\`, persistent, plan picked by the platform's p = 256 model);"
  echo "the linear loop is one \`MPI_Isend\`/\`MPI_Irecv\` per neighbour and \`MPI_Waitall\` (what Open MPI's and"
  echo "MPICH's neighbourhood collectives do; \`MPI_Neighbor_alltoallw\` is not in SMPI 3.32). Simulated us per"
  echo "exchange, back to back (max over ranks of the mean of 4 exchanges after 5 warm-ups), \`measured (predicted)\`."
  echo "auto / loop above 1.05 breaks the criterion. Periodic 2-D 9-point and 3-D 27-point Jacobi, local n^d, ghost width k."
  echo
  # shellcheck disable=SC2086
  python3 bench/smpi/halo_table.py --linear $(ls $r/halo_*_p*_n*_k*.txt | grep -v _sync); } >"$r/halo_vs_linear.md"
echo "wrote $r/halo_vs_linear.md"
