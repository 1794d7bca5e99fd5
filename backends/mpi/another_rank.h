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
// MPI_ERR_NO_MEM), passed invalid arguments to (argument_class), else failed in (MPI's own
// failure, ours, a tag space too small: not the caller's doing). `where`: the call, e.g.
// "this collective".
std::string another_rank_failed(int cls, std::string_view where);
// Its words for what happened, "ran out of memory in " and so on (a static string, with its
// trailing space), for a caller that must not allocate (it appends them to reserved room).
const char* another_rank_did(int cls) noexcept;
// Whether `cls` is one the library returns for a caller's mistake: MPI_ERR_ARG, _BUFFER, _COMM,
// _COUNT, _DIMS, _INFO, _INFO_KEY, _INFO_NOKEY, _INFO_VALUE, _OP, _RANK, _REQUEST, _ROOT,
// _TOPOLOGY, _TRUNCATE (block sizes that differ between ranks), _TYPE.
bool argument_class(int cls) noexcept;

}  // namespace cartplan::mpi
