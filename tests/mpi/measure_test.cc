// MPI test of measuring mode (Info cartplan_tune = measure, CARTPLAN_TUNE): persistent init
// times the close candidates on scratch memory. Init must leave the receive buffer alone,
// every rank must run the same plan, the data must be right with rank-dependent values, and
// bad or disagreeing values are errors on every rank, never a hang; requests in flight on the
// same communicator during a measured init complete with their own data.
#include <mpi.h>

#include <unistd.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "backends/mpi/exchange.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;

int value(int rank, int block, int j, int epoch) { return ((epoch * 16 + rank) * 64 + block) * 32 + j; }

struct Cart {
  MPI_Comm comm = MPI_COMM_NULL;
  int t = 0, me = 0;
  std::vector<int> sources;
};

// box:d=2 with n offsets per dimension, from -(n/2); `periodic_y`: whether the second
// dimension wraps (a mesh otherwise, where edge ranks have MPI_PROC_NULL neighbours).
Cart box2d(Harness& h, int n, bool periodic_y, const char* create_tune) {
  Cart c;
  std::vector<int> dims(2, 0), periods = {1, periodic_y ? 1 : 0}, offs;
  MPI_Dims_create(h.size, 2, dims.data());
  for (int a = -(n / 2); a < n - n / 2; ++a)
    for (int b = -(n / 2); b < n - n / 2; ++b) offs.insert(offs.end(), {a, b});
  c.t = n * n;
  MPI_Info info;
  MPI_Info_create(&info);
  if (create_tune) MPI_Info_set(info, "cartplan_tune", create_tune);
  const int rc = Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims.data(), periods.data(), c.t, offs.data(), MPI_UNWEIGHTED,
                                          info, 0, &c.comm);
  MPI_Info_free(&info);
  if (rc != MPI_SUCCESS) {
    std::fprintf(stderr, "Cart_neighborhood_create failed: %s\n", Cart_error_message());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm_rank(c.comm, &c.me);
  c.sources.resize(c.t);
  std::vector<int> targets(c.t);
  Cart_neighbor_get(c.comm, c.t, c.sources.data(), MPI_UNWEIGHTED, c.t, targets.data(), MPI_UNWEIGHTED);
  return c;
}

MPI_Info tune_info(const char* value) {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_tune", value);
  return info;
}

// Whether every rank's request runs the same plan (its canonical JSON, compared by a hash).
bool same_plan_everywhere(Cart_Request req, MPI_Comm comm) {
  char* json = nullptr;
  if (Cart_request_plan(req, &json) != MPI_SUCCESS) return false;
  std::uint64_t hash = 1469598103934665603ull;
  for (const char* p = json; *p; ++p) hash = (hash ^ static_cast<unsigned char>(*p)) * 1099511628211ull;
  Cart_free_plan_json(json);
  std::int64_t mine[2] = {static_cast<std::int64_t>(hash >> 1), -static_cast<std::int64_t>(hash >> 1)}, all[2];
  MPI_Allreduce(mine, all, 2, MPI_INT64_T, MPI_MAX, comm);
  return all[0] == -all[1];
}

// Alltoall on a mesh, measured per init: the receive buffer is untouched by init, then 20
// starts with new data each, waited after rank-dependent sleeps.
void alltoall_mesh(Harness& h) {
  Cart c = box2d(h, 3, false, nullptr);
  const int m = 25;
  std::vector<int> send(c.t * m), recv(c.t * m, -7);
  MPI_Info info = tune_info("measure");
  Cart_Request req;
  h.check(Cart_alltoall_init(send.data(), m, MPI_INT, recv.data(), m, MPI_INT, c.comm, info, &req) == MPI_SUCCESS,
          std::string("alltoall init: ") + Cart_error_message());
  MPI_Info_free(&info);
  bool untouched = true;
  for (int v : recv) untouched = untouched && v == -7;
  h.check(untouched, "measured init wrote into the receive buffer");
  h.check(same_plan_everywhere(req, c.comm), "ranks run different plans after a measured init");
  for (int epoch = 0; epoch < 20; ++epoch) {
    for (int i = 0; i < c.t; ++i)
      for (int j = 0; j < m; ++j) send[i * m + j] = value(c.me, i, j, epoch);
    std::fill(recv.begin(), recv.end(), -1);
    h.check(Cart_start(&req) == MPI_SUCCESS, "start");
    if ((c.me + epoch) % 3 == 0) usleep(200);
    h.check(Cart_wait(&req) == MPI_SUCCESS, "wait");
    bool ok = true;
    for (int i = 0; i < c.t; ++i)
      for (int j = 0; j < m; ++j)
        ok = ok && recv[i * m + j] == (c.sources[i] == MPI_PROC_NULL ? -1 : value(c.sources[i], i, j, epoch));
    h.check(ok, "measured alltoall delivered wrong data at epoch " + std::to_string(epoch));
  }
  Cart_request_free(&req);
  MPI_Comm_free(&c.comm);
}

// Allgather of a deep halo (box n = 5: log-round and hybrid are candidates too), measuring
// asked for at creation; two measured requests alive at once, waited in rank-dependent order.
void allgather_deep(Harness& h) {
  Cart c = box2d(h, 5, true, "measure");
  for (const int m : {1, 300}) {
    std::vector<int> send_a(m), recv_a(c.t * m, -1), send_b(m), recv_b(c.t * m, -1);
    Cart_Request a, b;
    h.check(Cart_allgather_init(send_a.data(), m, MPI_INT, recv_a.data(), m, MPI_INT, c.comm, MPI_INFO_NULL, &a) == MPI_SUCCESS,
            std::string("allgather init a: ") + Cart_error_message());
    h.check(Cart_allgather_init(send_b.data(), m, MPI_INT, recv_b.data(), m, MPI_INT, c.comm, MPI_INFO_NULL, &b) == MPI_SUCCESS,
            std::string("allgather init b: ") + Cart_error_message());
    h.check(same_plan_everywhere(a, c.comm) && same_plan_everywhere(b, c.comm), "allgather: ranks run different plans");
    for (int epoch = 0; epoch < 10; ++epoch) {
      for (int j = 0; j < m; ++j) send_a[j] = value(c.me, 0, j, epoch), send_b[j] = value(c.me, 1, j, epoch);
      h.check(Cart_start(&a) == MPI_SUCCESS && Cart_start(&b) == MPI_SUCCESS, "allgather starts");
      if (c.me % 2) {
        h.check(Cart_wait(&b) == MPI_SUCCESS && Cart_wait(&a) == MPI_SUCCESS, "allgather waits b, a");
      } else {
        int done = 0;
        while (!done) h.check(Cart_test(&a, &done) == MPI_SUCCESS, "allgather test a");
        h.check(Cart_wait(&b) == MPI_SUCCESS, "allgather wait b");
      }
      bool ok = true;
      for (int i = 0; i < c.t; ++i)
        for (int j = 0; j < m; ++j)
          ok = ok && recv_a[i * m + j] == value(c.sources[i], 0, j, epoch) && recv_b[i * m + j] == value(c.sources[i], 1, j, epoch);
      h.check(ok, "measured allgather m=" + std::to_string(m) + " delivered wrong data at epoch " + std::to_string(epoch));
    }
    Cart_request_free(&a);
    Cart_request_free(&b);
  }
  MPI_Comm_free(&c.comm);
}

// Alltoallw with strided receive blocks at absolute addresses (MPI_BOTTOM). `split`: block 0
// lives on the stack, the others on the heap, so the receive span is far too large for the
// trials' scratch memory and every rank keeps the model's pick; otherwise all are measured.
void alltoallw_strided(Harness& h, bool split) {
  Cart c = box2d(h, 3, true, nullptr);
  const int m = 6;
  MPI_Datatype every_other;
  MPI_Type_vector(m, 1, 2, MPI_INT, &every_other);
  MPI_Type_commit(&every_other);
  std::vector<int> send(c.t * m), heap(c.t * 2 * m, -5);
  int stack_block[2 * m];
  std::fill(stack_block, stack_block + 2 * m, -5);
  std::vector<int> scounts(c.t, m), rcounts(c.t, 1);
  std::vector<MPI_Aint> sdispls(c.t), rdispls(c.t);
  std::vector<MPI_Datatype> stypes(c.t, MPI_INT), rtypes(c.t, every_other);
  for (int i = 0; i < c.t; ++i) {
    sdispls[i] = static_cast<MPI_Aint>(i) * m * sizeof(int);
    MPI_Get_address(split && i == 0 ? stack_block : heap.data() + 2 * m * i, &rdispls[i]);
  }
  MPI_Info info = tune_info("measure");
  Cart_Request req;
  h.check(Cart_alltoallw_init(send.data(), scounts.data(), sdispls.data(), stypes.data(), MPI_BOTTOM, rcounts.data(),
                              rdispls.data(), rtypes.data(), c.comm, info, &req) == MPI_SUCCESS,
          std::string("alltoallw init: ") + Cart_error_message());
  MPI_Info_free(&info);
  bool untouched = true;
  for (int v : heap) untouched = untouched && v == -5;
  for (int v : stack_block) untouched = untouched && v == -5;
  h.check(untouched, "measured alltoallw init wrote into the receive blocks");
  h.check(same_plan_everywhere(req, c.comm), "alltoallw: ranks run different plans");
  for (int epoch = 0; epoch < 5; ++epoch) {
    for (int i = 0; i < c.t; ++i)
      for (int j = 0; j < m; ++j) send[i * m + j] = value(c.me, i, j, epoch);
    h.check(Cart_start(&req) == MPI_SUCCESS && Cart_wait(&req) == MPI_SUCCESS, "alltoallw start/wait");
    bool ok = true;
    for (int i = 0; i < c.t; ++i) {
      const int* block = split && i == 0 ? stack_block : heap.data() + 2 * m * i;
      for (int j = 0; j < m; ++j) ok = ok && block[2 * j] == value(c.sources[i], i, j, epoch) && block[2 * j + 1] == -5;
    }
    h.check(ok, std::string("measured alltoallw (") + (split ? "split" : "heap") + ") wrong data at epoch " + std::to_string(epoch));
  }
  Cart_request_free(&req);
  MPI_Type_free(&every_other);
  MPI_Comm_free(&c.comm);
}

// A non-blocking alltoall in flight while the same communicator measures a new request: both
// must deliver their own data (the trials run on the new request's own lane).
void inflight_during_measure(Harness& h) {
  Cart c = box2d(h, 3, true, nullptr);
  const int m = 7;
  std::vector<int> a_send(c.t * m), a_recv(c.t * m, -1), p_send(c.t * m), p_recv(c.t * m, -1);
  for (int i = 0; i < c.t; ++i)
    for (int j = 0; j < m; ++j) a_send[i * m + j] = value(c.me, i, j, 3), p_send[i * m + j] = value(c.me, i, j, 4);
  Cart_Request a, p;
  h.check(Cart_ialltoall(a_send.data(), m, MPI_INT, a_recv.data(), m, MPI_INT, c.comm, &a) == MPI_SUCCESS, "ialltoall");
  if (c.me % 2) usleep(1000);
  MPI_Info info = tune_info("measure");
  h.check(Cart_alltoall_init(p_send.data(), m, MPI_INT, p_recv.data(), m, MPI_INT, c.comm, info, &p) == MPI_SUCCESS,
          std::string("measured init with a request in flight: ") + Cart_error_message());
  MPI_Info_free(&info);
  h.check(Cart_start(&p) == MPI_SUCCESS, "start p");
  if (c.me % 2) {
    h.check(Cart_wait(&a) == MPI_SUCCESS && Cart_wait(&p) == MPI_SUCCESS, "waits a, p");
  } else {
    h.check(Cart_wait(&p) == MPI_SUCCESS && Cart_wait(&a) == MPI_SUCCESS, "waits p, a");
  }
  bool ok_a = true, ok_p = true;
  for (int i = 0; i < c.t; ++i)
    for (int j = 0; j < m; ++j) {
      ok_a = ok_a && a_recv[i * m + j] == value(c.sources[i], i, j, 3);
      ok_p = ok_p && p_recv[i * m + j] == value(c.sources[i], i, j, 4);
    }
  h.check(ok_a, "the request in flight during a measured init got wrong data");
  h.check(ok_p, "the request measured while another was in flight got wrong data");
  Cart_request_free(&p);
  MPI_Comm_free(&c.comm);
}

// Bad values name the key; ranks that disagree get an error on every rank, not a hang.
void errors(Harness& h) {
  Cart c = box2d(h, 3, true, nullptr);
  std::vector<int> send(c.t), recv(c.t);
  MPI_Comm_set_errhandler(c.comm, MPI_ERRORS_RETURN);
  auto init_with = [&](const char* tune) {
    MPI_Info info = tune_info(tune);
    Cart_Request req;
    const int rc = Cart_alltoall_init(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, c.comm, info, &req);
    MPI_Info_free(&info);
    if (rc == MPI_SUCCESS) Cart_request_free(&req);
    return rc;
  };
  int rc = init_with("fastest");
  int cls = -1;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  h.check(cls == MPI_ERR_INFO_VALUE, "cartplan_tune = 'fastest' is not MPI_ERR_INFO_VALUE");
  h.check(std::string(Cart_error_message()).find("cartplan_tune = 'fastest'") != std::string::npos,
          std::string("the error does not name the key and value: ") + Cart_error_message());
  if (h.size > 1) {
    rc = init_with(c.me == 0 ? "measure" : "model");
    cls = -1;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    h.check(cls == MPI_ERR_INFO_VALUE, "ranks disagreeing on cartplan_tune are not an MPI_ERR_INFO_VALUE on every rank");
  }
  MPI_Comm_free(&c.comm);
}

}  // namespace

// The choice among measured medians (index 0: the model's pick): a candidate replaces it only
// when at least 5 % faster, and then the fastest such candidate wins.
void pick_rule(Harness& h) {
  using cartplan::mpi::measured_pick;
  h.check(measured_pick({10.0}) == 0, "pick: one candidate");
  h.check(measured_pick({10.0, 9.6, 9.8}) == 0, "pick: 4 % faster keeps the model's pick");
  h.check(measured_pick({10.0, 9.4}) == 1, "pick: 6 % faster replaces it");
  h.check(measured_pick({10.0, 9.0, 8.0, 9.5}) == 2, "pick: the fastest of those below the margin");
  h.check(measured_pick({10.0, 11.0, 12.0}) == 0, "pick: slower candidates never replace it");
  h.check(measured_pick({10.0, 9.4, 9.3}) == 2, "pick: the lowest median among the faster ones");
}

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  pick_rule(h);
  alltoall_mesh(h);
  allgather_deep(h);
  alltoallw_strided(h, false);
  alltoallw_strided(h, true);
  inflight_during_measure(h);
  errors(h);
  return h.finish("measure_test");
}
