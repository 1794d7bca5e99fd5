// The case the derived-datatype reuse tests share: a 2-D periodic Moore neighbourhood (8
// blocks) on a cartplan communicator, a send buffer with rank-dependent values whose block i
// starts at element kSpacing * i, and strided send datatypes that pick kElems of its elements.
//
//   DerivedCase c = make_derived_case(rank, size, "combining");
//   MPI_Datatype a = strided(2);  // ... Cart_alltoallw / Cart_ialltoallw with a per block
//   bool ok = c.holds(recv, 2);   // every block has its source's elements at stride 2
#pragma once

#include <mpi.h>

#include <vector>

#include "tests/mpi/harness.h"

namespace cartplan::mpitest {

constexpr int kElems = 4;      // elements per block
constexpr int kSpacing = 100;  // block i of a send buffer starts at element kSpacing * i

struct DerivedCase {
  MPI_Comm cart = MPI_COMM_NULL;
  int t = 0;
  std::vector<int> sources;  // per block: the rank it comes from
  std::vector<int> send;     // rank * 10000 + element index (+ `base` of set_send)
  std::vector<int> counts;   // 1 per block
  std::vector<MPI_Aint> sdispls, rdispls;  // block i: kSpacing * i ints; kElems * i ints

  // Sets every send element to rank * 10000 + index + base.
  void set_send(int rank, int base) {
    for (std::size_t e = 0; e < send.size(); ++e) send[e] = rank * 10000 + static_cast<int>(e) + base;
  }
  // Whether `recv` (kElems per block) holds, per block, its source's elements `stride` apart
  // from the block's start, sent with base `base`.
  bool holds(const std::vector<int>& recv, int stride, int base = 0) const {
    for (int i = 0; i < t; ++i)
      for (int k = 0; k < kElems; ++k)
        if (recv[kElems * i + k] != sources[i] * 10000 + kSpacing * i + stride * k + base) return false;
    return true;
  }
};

inline DerivedCase make_derived_case(int rank, int size, const char* algo) {
  int dims[2] = {0, 0};
  MPI_Dims_create(size, 2, dims);
  std::vector<int> offsets;
  for (int x = -1; x <= 1; ++x)
    for (int y = -1; y <= 1; ++y)
      if (x || y) offsets.insert(offsets.end(), {x, y});
  DerivedCase c;
  c.t = static_cast<int>(offsets.size() / 2);
  c.cart = open_cart(2, {dims[0], dims[1]}, {1, 1}, c.t, offsets, algo);
  for (int i = 0; i < c.t; ++i) {
    int in = 0, out = 0;
    Cart_relative_shift(c.cart, &offsets[2 * i], &in, &out);
    c.sources.push_back(in);
    c.sdispls.push_back(static_cast<MPI_Aint>(sizeof(int)) * kSpacing * i);
    c.rdispls.push_back(static_cast<MPI_Aint>(sizeof(int)) * kElems * i);
  }
  c.counts.assign(c.t, 1);
  c.send.resize(kSpacing * c.t);
  c.set_send(rank, 0);
  return c;
}

// A send datatype: kElems ints `stride` apart, committed.
inline MPI_Datatype strided(int stride) {
  MPI_Datatype t;
  MPI_Type_vector(kElems, 1, stride, MPI_INT, &t);
  MPI_Type_commit(&t);
  return t;
}

// A receive datatype: kElems contiguous ints, committed (derived, so that it is keyed by layout).
inline MPI_Datatype contiguous_block() {
  MPI_Datatype t;
  MPI_Type_contiguous(kElems, MPI_INT, &t);
  MPI_Type_commit(&t);
  return t;
}

// Completes `requests` in a rank-dependent order: rank % 3 == 0 waits in posting order, 1 in
// reverse, 2 tests them round-robin from request rank % n until all are done. `wait(&r)` and
// `test(&r, &flag)` return an MPI error code and set a completed request to `null`. Returns
// MPI_SUCCESS or the first error.
template <class Request, class Wait, class Test>
int complete_in_rank_order(int rank, std::vector<Request>& requests, Request null, const Wait& wait, const Test& test) {
  const int n = static_cast<int>(requests.size());
  int rc = MPI_SUCCESS;
  auto note = [&rc](int code) {
    if (rc == MPI_SUCCESS) rc = code;
  };
  if (rank % 3 == 0) {
    for (int k = 0; k < n; ++k) note(wait(&requests[k]));
  } else if (rank % 3 == 1) {
    for (int k = n - 1; k >= 0; --k) note(wait(&requests[k]));
  } else {
    for (int k = rank % n, done = 0; done < n; k = (k + 1) % n) {
      if (requests[k] == null) continue;
      int flag = 0;
      note(test(&requests[k], &flag));
      if (flag) ++done;
    }
  }
  return rc;
}

}  // namespace cartplan::mpitest
