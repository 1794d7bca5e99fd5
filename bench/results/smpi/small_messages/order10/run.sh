#!/usr/bin/env bash
# The five 55-run points where the floor experiment picks dimwise in order 1,0, re-run in that order (small_messages.md).
# Same recipe as logp_collectives/sendorder/ (log-p collectives, its SMPI binary, the nic_overlap model), plus --dim-order 1,0;
# outputs in /tmp/sm/order10, copied here.
cd "$(dirname "$0")/../../../../.."
for pt in "dragonfly 256 8 1" "fattree 256 8 1" "fattree 256 8 3" "torus 64 8 1" "torus 64 8 3"; do
  set -- $pt
  SMPI_COLLECTIVES=logp DIMS=2 HALO_ARGS="--iters 24 --check exchange --dim-order 1,0" HALO_BIN_DIR=/work/smpi_bin/sendorder \
    HALO_MODEL=bench/results/smpi/nic_overlap/cost_model_$1_p256.json HALO_OUT_DIR=/tmp/sm/order10 \
    nice -n 5 bash bench/smpi/halo_scale.sh $1 $2 $3 $4 900
done
