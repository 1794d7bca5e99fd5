// another_rank_failed's wording by error class: out of memory, the caller's arguments (the
// classes the library returns for a caller's mistake), and failed in for everything else.
#include "backends/mpi/another_rank.h"

#include <mpi.h>

#include <string>

#include <doctest/doctest.h>

using cartplan::mpi::another_rank_did;
using cartplan::mpi::another_rank_failed;
using cartplan::mpi::argument_class;

TEST_CASE("running out of memory is named as such") {
  CHECK(another_rank_failed(MPI_ERR_NO_MEM, "this collective") ==
        "another rank ran out of memory in this collective (error class " + std::to_string(MPI_ERR_NO_MEM) + " there)");
  CHECK_FALSE(argument_class(MPI_ERR_NO_MEM));
}

TEST_CASE("the caller's mistakes are invalid arguments") {
  for (int cls : {MPI_ERR_ARG, MPI_ERR_BUFFER, MPI_ERR_COMM, MPI_ERR_COUNT, MPI_ERR_DIMS, MPI_ERR_INFO, MPI_ERR_INFO_KEY, MPI_ERR_INFO_NOKEY,
                  MPI_ERR_INFO_VALUE, MPI_ERR_OP, MPI_ERR_RANK, MPI_ERR_REQUEST, MPI_ERR_ROOT, MPI_ERR_TOPOLOGY, MPI_ERR_TRUNCATE, MPI_ERR_TYPE}) {
    CAPTURE(cls);
    CHECK(argument_class(cls));
    CHECK(another_rank_failed(cls, "Cart_neighborhood_create") ==
          "another rank passed invalid arguments to Cart_neighborhood_create (error class " + std::to_string(cls) + " there)");
  }
}

TEST_CASE("any other class failed there, not by the caller's doing") {
  // MPI_ERR_TAG: a schedule's tags that do not fit the communicator; MPI_ERR_UNSUPPORTED_OPERATION:
  // this MPI library cannot; the rest: MPI's or our own failure.
  for (int cls : {MPI_ERR_INTERN, MPI_ERR_OTHER, MPI_ERR_UNKNOWN, MPI_ERR_TAG, MPI_ERR_PENDING, MPI_ERR_IN_STATUS,
                  MPI_ERR_UNSUPPORTED_OPERATION}) {
    CAPTURE(cls);
    CHECK_FALSE(argument_class(cls));
    CHECK(std::string(another_rank_did(cls)) == "failed in ");
    CHECK(another_rank_failed(cls, "the grid construction") ==
          "another rank failed in the grid construction (error class " + std::to_string(cls) + " there)");
  }
}
