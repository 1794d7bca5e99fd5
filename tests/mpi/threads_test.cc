// MPI test of thread safety under MPI_THREAD_MULTIPLE: two threads per process, each with its
// own Cartesian communicator, run blocking, non-blocking and persistent collectives at the same
// time (so the process-wide progress of pending requests is shared between threads), with
// thread- and rank-dependent data checked on every call.
#include <mpi.h>

#include <string>
#include <thread>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;

int value(int thread, int rank, int block, int iter) { return ((iter * 2 + thread) * 256 + rank) * 64 + block; }

struct Cart {
  MPI_Comm comm = MPI_COMM_NULL;
  int me = 0, t = 0;
  std::vector<int> sources;
};

Cart make(Harness& h, const char* algorithm) {
  Cart c;
  int dims[2] = {0, 0}, periods[2] = {1, 0};
  MPI_Dims_create(h.size, 2, dims);
  const int offs[] = {1, 0, -1, 0, 0, 1, 0, -1, 1, 1, -1, -1, 0, 0};
  c.t = 7;
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", algorithm);
  h.check(Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, c.t, offs, MPI_UNWEIGHTED, info, 0, &c.comm) == MPI_SUCCESS, "create");
  MPI_Info_free(&info);
  MPI_Comm_rank(c.comm, &c.me);
  c.sources.resize(c.t);
  std::vector<int> targets(c.t);
  Cart_neighbor_get(c.comm, c.t, c.sources.data(), MPI_UNWEIGHTED, c.t, targets.data(), MPI_UNWEIGHTED);
  return c;
}

void worker(Harness& h, const Cart& c, int thread, int iterations) {
  const int t = c.t;
  std::vector<int> s(t), r(t), ps(t), pr(t);
  Cart_Request persistent = CART_REQUEST_NULL;
  h.check(Cart_alltoall_init(ps.data(), 1, MPI_INT, pr.data(), 1, MPI_INT, c.comm, MPI_INFO_NULL, &persistent) == MPI_SUCCESS, "init");
  bool ok = true;
  auto expect = [&](const std::vector<int>& got, int iter, int salt) {
    for (int i = 0; i < t; ++i)
      if (c.sources[i] != MPI_PROC_NULL && got[i] != value(thread, c.sources[i], i, iter) + salt) return false;
    return true;
  };
  for (int it = 0; it < iterations && ok; ++it) {
    for (int i = 0; i < t; ++i) {
      s[i] = value(thread, c.me, i, it);
      ps[i] = value(thread, c.me, i, it) + 7;
    }
    ok = Cart_start(&persistent) == MPI_SUCCESS;
    ok = ok && Cart_alltoall(s.data(), 1, MPI_INT, r.data(), 1, MPI_INT, c.comm) == MPI_SUCCESS && expect(r, it, 0);
    Cart_Request q = CART_REQUEST_NULL;
    ok = ok && Cart_ialltoall(s.data(), 1, MPI_INT, r.data(), 1, MPI_INT, c.comm, &q) == MPI_SUCCESS;
    int flag = 0;
    while (ok && !flag) ok = Cart_test(&q, &flag) == MPI_SUCCESS;
    ok = ok && expect(r, it, 0) && Cart_wait(&persistent) == MPI_SUCCESS && expect(pr, it, 7);
  }
  h.check(ok, "thread " + std::to_string(thread) + ": every call succeeds with its own data");
  Cart_request_free(&persistent);
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv, MPI_THREAD_MULTIPLE);
  if (h.provided < MPI_THREAD_MULTIPLE) {
    h.check(false, "MPI_THREAD_MULTIPLE is not provided by this MPI library");
    return h.finish("threads_test");
  }
  Cart a = make(h, "combining"), b = make(h, "direct");
  std::thread one([&] { worker(h, a, 0, 300); });
  std::thread two([&] { worker(h, b, 1, 300); });
  one.join();
  two.join();
  MPI_Comm_free(&a.comm);
  MPI_Comm_free(&b.comm);
  return h.finish("threads_test");
}
