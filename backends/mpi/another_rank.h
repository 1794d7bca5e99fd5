// How a rank words another rank's failure, learned from an agreement (the largest error class of
// any rank): one wording for every agreement that names it, so that running out of memory there
// is not called an argument error.
//
//   return mpi_error(worst, another_rank_failed(worst, "Cart_neighborhood_create"));
//   // "another rank ran out of memory in Cart_neighborhood_create (error class 34 there)"
#pragma once

#include <string>
#include <string_view>

namespace cartplan::mpi {

// "another rank <what happened> <where> (error class `cls` there)": ran out of memory in (for
// MPI_ERR_NO_MEM), failed in (MPI_ERR_INTERN, MPI_ERR_OTHER, MPI_ERR_UNKNOWN: not the caller's
// doing), else passed invalid arguments to. `where`: the call, e.g. "this collective".
std::string another_rank_failed(int cls, std::string_view where);

}  // namespace cartplan::mpi
