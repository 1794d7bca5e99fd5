#!/usr/bin/env bash
# Sourced by bench/osu_neighbor.sh and bench/osu_paired.sh after their arguments: the results
# directory ($out, from CARTPLAN_MACHINE_TAG), copies of the two OSU-style programs and the drop-in
# ($prog, $native, $lib; copies, so that a rebuild during the run cannot change what is measured),
# the transports of tests/mpi/run_mpi.sh and the message sizes ($sizes, 1 B to 4 KB).
tag=${CARTPLAN_MACHINE_TAG:-cpp-2core}
out=bench/results/$tag
mkdir -p "$out"
bin_dir=$(mktemp -d)
trap 'rm -rf "$bin_dir"' EXIT
source bench/build_copy.sh
build_copy "$bin_dir" //bench:osu_neighbor //bench:osu_neighbor_native //backends/interpose:libcartplan_interpose.so
prog=$bin_dir/osu_neighbor
native=$bin_dir/osu_neighbor_native
lib=$bin_dir/libcartplan_interpose.so
# Open MPI chooses busy polling or yielding itself (it yields when a node is oversubscribed), the
# same for every mode.
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
sizes=1,2,4,8,16,32,64,128,256,512,1024,2048,4096
