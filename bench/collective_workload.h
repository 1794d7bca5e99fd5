// One neighbourhood collective's buffers for collective_bench: rank-dependent send data, the
// receive buffer, what every receive block must hold afterwards (worked out from the process
// grid's coordinates, not from cartplan), the cartplan calls and the linear baseline loop.
//
//   Workload w("alltoall", nbh, 100, cart);   // 100 ints per block
//   w.clear_recv();  w.linear();  bool right = w.delivered();
//   Cart_Request r;  w.init(cart, &r);         // persistent Cart_alltoall_init on cart
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "engine/neighborhood.h"

namespace cartplan::bench {

class Workload {
 public:
  // op: alltoall (m ints per block), allgather (one block of m ints to every neighbour) or
  // alltoallv (m^(d-z) ints for an offset with z non-zero coordinates, seed 000's halo-like sizes;
  // 0 for the zero offset). `cart`: a communicator from Cart_neighborhood_create with `nbh`.
  Workload(const std::string& op, const engine::Neighborhood& nbh, int m, MPI_Comm cart);

  int init(MPI_Comm c, Cart_Request* req);  // the persistent cartplan call on c
  int blocking(MPI_Comm c);                 // the blocking cartplan call on c
  // The loop of Open MPI's and MPICH's neighbourhood collectives: every MPI_Irecv, every MPI_Isend,
  // one MPI_Waitall (block i with tag i, so repeated peers pair blocks correctly).
  void linear();
  std::vector<MPI_Request> linear_init();  // the same messages as persistent requests

  void clear_recv();       // every receive block to a value no send carries
  bool delivered() const;  // every receive block holds what its source sent (or is untouched outside a mesh)
  std::vector<std::int64_t> block_bytes() const;  // per block, for the cost model

 private:
  std::string op_;
  int t_ = 0;
  MPI_Comm cart_;
  std::vector<int> sources_, targets_;  // MPI_PROC_NULL outside a mesh
  std::vector<int> counts_, displs_;    // per block, in ints (alltoallv; uniform otherwise)
  std::vector<int> send_, recv_, expected_;
};

}  // namespace cartplan::bench
