# The smpirun options that give SMPI's global collectives the log-p algorithms Open MPI's coll/tuned
# picks for small messages (sourced by bench/smpi/graph_sweep.sh and halo_scale.sh): recursive
# doubling for MPI_Allreduce and MPI_Barrier, a binomial tree for MPI_Bcast and MPI_Reduce,
# recursive doubling for MPI_Allgather (which SMPI's communicator creation uses). Without them SMPI
# runs its default algorithms, a root that talks to every rank in turn: at p = 256 a barrier's last
# rank leaves about 100 us after its first, and that ramp is where a back-to-back run starts
# (bench/results/smpi/logp_collectives.md). cartplan itself makes no global collective per call.
logp_collectives=(--cfg=smpi/allreduce:rdb --cfg=smpi/barrier:ompi_recursivedoubling --cfg=smpi/bcast:binomial_tree
                  --cfg=smpi/reduce:ompi_binomial --cfg=smpi/allgather:rdb)
