// The agreement of Cart_neighborhood_create: whether every rank passed the same neighbourhood,
// dims, periods and options (Info keys, environment, the cost model found), checked with one
// broadcast of rank 0's description at creation (seed 000 Sect. 2.2), never per call.
//
//   MpiStatus s = agree_on_description(comm, d, dims, periods, t, rel, options);
//   // collective over comm; on every rank MPI_ERR_ARG if any rank differs from rank 0,
//   // naming the difference on the ranks that differ.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "backends/mpi/info_options.h"
#include "backends/mpi/status.h"

namespace cartplan::mpi {

// Everything about a creation call that must agree across ranks, flattened: d, dims, periods,
// t, the offsets (t x d, row by row), then the options that change what runs. Prices are their
// bit patterns, so "the same" means bit-identical.
std::vector<std::int64_t> creation_description(int d, const int dims[], const int periods[], int t, const int rel[],
                                               const Options& options);

// In words, what differs between this rank's description (`mine`, of d dimensions and t
// offsets) and rank 0's (`root`): the first of d, a dim, a period, t, an offset, else the options.
std::string description_difference(const std::vector<std::int64_t>& mine, const std::vector<std::int64_t>& root, int d,
                                   int t);

// Collective over `comm`: every rank returns MPI_ERR_ARG if any rank's description differs
// from rank 0's, else the largest error class of `local` (a rank's local step before it: the
// allreduce carries it), else success. O(t d) data: one broadcast and one allreduce of two ints.
MpiStatus agree_on_description(MPI_Comm comm, int d, const int dims[], const int periods[], int t, const int rel[],
                               const Options& options, const MpiStatus& local = {});

}  // namespace cartplan::mpi
