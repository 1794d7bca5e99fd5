// MPI test of many requests in flight on one communicator with rank-dependent progress: the
// reproduction of the crossed-tags bug (direct and combining persistent requests, tests with
// sleeps on even ranks), a stress test with 16+ requests of every op and algorithm alive
// together (persistent, non-blocking and blocking calls interleaved, waits in random per-rank
// orders, data checked every iteration), the array calls and MPI_Comm_dup.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;

// Every value says who sent it, for which block, element, iteration and request.
int value(int rank, int block, int j, int iter, int req) { return (((iter % 1000) * 64 + req) * 256 + rank) * 64 * 4 + block * 4 + j; }

MPI_Info algo_info(const char* algo, const char* order = "auto") {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", algo);
  MPI_Info_set(info, "cartplan_dim_order", order);
  return info;
}

struct Cart {
  MPI_Comm comm = MPI_COMM_NULL;
  int t = 0, me = 0;
  std::vector<int> sources, targets;
};

Cart make_cart(Harness& h, const std::vector<int>& periods, const std::vector<std::vector<int>>& offsets) {
  Cart c;
  int dims[2] = {0, 0};
  MPI_Dims_create(h.size, 2, dims);
  std::vector<int> flat;
  for (const auto& o : offsets) flat.insert(flat.end(), o.begin(), o.end());
  c.t = static_cast<int>(offsets.size());
  h.check(Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods.data(), c.t, flat.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                   &c.comm) == MPI_SUCCESS,
          std::string("creation: ") + Cart_error_message());
  MPI_Comm_rank(c.comm, &c.me);
  c.sources.resize(c.t);
  c.targets.resize(c.t);
  Cart_neighbor_get(c.comm, c.t, c.sources.data(), MPI_UNWEIGHTED, c.t, c.targets.data(), MPI_UNWEIGHTED);
  return c;
}

// The reproduction: A direct (one round per offset), B combining (fewer rounds), both
// persistent; B started first and tested with sleeps on even ranks only, A started and waited,
// then B waited. Before lanes, their tag ranges overlapped and A received B's data.
void reproduction(Harness& h) {
  std::vector<std::vector<int>> box;
  for (int a = -1; a <= 1; ++a)
    for (int b = -1; b <= 1; ++b) box.push_back({a, b});
  Cart c = make_cart(h, {1, 1}, box);
  const int t = c.t;
  std::vector<int> as(t), ar(t), bs(t), br(t);
  MPI_Info di = algo_info("direct"), ci = algo_info("combining");
  Cart_Request a = CART_REQUEST_NULL, b = CART_REQUEST_NULL;
  h.check(Cart_alltoall_init(as.data(), 1, MPI_INT, ar.data(), 1, MPI_INT, c.comm, di, &a) == MPI_SUCCESS, "init A");
  h.check(Cart_alltoall_init(bs.data(), 1, MPI_INT, br.data(), 1, MPI_INT, c.comm, ci, &b) == MPI_SUCCESS, "init B");
  MPI_Info_free(&di);
  MPI_Info_free(&ci);
  bool ok = true;
  for (int it = 0; it < 200 && ok; ++it) {
    for (int i = 0; i < t; ++i) {
      as[i] = value(c.me, i, 0, it, 1);
      bs[i] = value(c.me, i, 0, it, 2);
    }
    std::fill(ar.begin(), ar.end(), -1);
    std::fill(br.begin(), br.end(), -1);
    ok = ok && Cart_start(&b) == MPI_SUCCESS;
    MPI_Barrier(MPI_COMM_WORLD);
    if (c.me % 2 == 0)
      for (int k = 0; k < 3; ++k) {
        int flag = 0;
        ok = ok && Cart_test(&b, &flag) == MPI_SUCCESS;
        usleep(50);
      }
    ok = ok && Cart_start(&a) == MPI_SUCCESS && Cart_wait(&a) == MPI_SUCCESS && Cart_wait(&b) == MPI_SUCCESS;
    for (int i = 0; i < t; ++i) {
      if (ar[i] != value(c.sources[i], i, 0, it, 1)) ok = false;
      if (br[i] != value(c.sources[i], i, 0, it, 2)) ok = false;
    }
  }
  h.check(ok, "reproduction: A and B in flight together deliver their own data for 200 iterations");
  Cart_request_free(&a);
  Cart_request_free(&b);
  MPI_Comm_free(&c.comm);
}

// One request of the stress test with its buffers and how to check them.
struct Field {
  std::string name;
  int op = 0;  // 0 alltoall, 1 alltoallv, 2 alltoallw, 3 allgather, 4 allgatherv, 5 allgatherw
  int m = 1;   // ints per block
  int id = 0;
  std::vector<int> send, recv;
  std::vector<int> counts, displs;         // v: in elements
  std::vector<MPI_Aint> bdispls;           // w: in bytes
  std::vector<MPI_Datatype> types;
  Cart_Request req = CART_REQUEST_NULL;

  bool gather() const { return op >= 3; }
  void setup(const Cart& c) {
    const int t = c.t;
    send.assign(static_cast<std::size_t>(gather() ? m : t * m), 0);
    recv.assign(static_cast<std::size_t>(t * m), 0);
    counts.assign(t, m);
    displs.resize(t);
    bdispls.resize(t);
    types.assign(t, MPI_INT);
    for (int i = 0; i < t; ++i) {  // reversed block order in the v/w forms
      displs[i] = (t - 1 - i) * m;
      bdispls[i] = static_cast<MPI_Aint>(displs[i] * sizeof(int));
    }
  }
  int send_at(int i, int j) const { return gather() ? j : (op == 0 ? i * m + j : displs[i] + j); }
  int recv_at(int i, int j) const { return (op == 0 || op == 3) ? i * m + j : displs[i] + j; }
  void fill(const Cart& c, int iter) {
    const int blocks = gather() ? 1 : c.t;
    for (int i = 0; i < blocks; ++i)
      for (int j = 0; j < m; ++j) send[send_at(i, j)] = value(c.me, gather() ? 0 : i, j, iter, id);
    std::fill(recv.begin(), recv.end(), -1);
  }
  bool check(const Cart& c, int iter) const {
    for (int i = 0; i < c.t; ++i)
      for (int j = 0; j < m; ++j) {
        const int want = c.sources[i] == MPI_PROC_NULL ? -1 : value(c.sources[i], gather() ? 0 : i, j, iter, id);
        if (recv[recv_at(i, j)] != want) return false;
      }
    return true;
  }
  // Persistent init (info given) or non-blocking call (info == nullptr).
  int post(const Cart& c, MPI_Info* info) {
    int* sc = counts.data();
    if (info) {
      switch (op) {
        case 0: return Cart_alltoall_init(send.data(), m, MPI_INT, recv.data(), m, MPI_INT, c.comm, *info, &req);
        case 1: return Cart_alltoallv_init(send.data(), sc, displs.data(), MPI_INT, recv.data(), sc, displs.data(), MPI_INT, c.comm, *info, &req);
        case 2: return Cart_alltoallw_init(send.data(), sc, bdispls.data(), types.data(), recv.data(), sc, bdispls.data(), types.data(), c.comm, *info, &req);
        case 3: return Cart_allgather_init(send.data(), m, MPI_INT, recv.data(), m, MPI_INT, c.comm, *info, &req);
        case 4: return Cart_allgatherv_init(send.data(), m, MPI_INT, recv.data(), sc, displs.data(), MPI_INT, c.comm, *info, &req);
        default: return Cart_allgatherw_init(send.data(), m, MPI_INT, recv.data(), sc, bdispls.data(), types.data(), c.comm, *info, &req);
      }
    }
    switch (op) {
      case 0: return Cart_ialltoall(send.data(), m, MPI_INT, recv.data(), m, MPI_INT, c.comm, &req);
      case 1: return Cart_ialltoallv(send.data(), sc, displs.data(), MPI_INT, recv.data(), sc, displs.data(), MPI_INT, c.comm, &req);
      case 2: return Cart_ialltoallw(send.data(), sc, bdispls.data(), types.data(), recv.data(), sc, bdispls.data(), types.data(), c.comm, &req);
      case 3: return Cart_iallgather(send.data(), m, MPI_INT, recv.data(), m, MPI_INT, c.comm, &req);
      case 4: return Cart_iallgatherv(send.data(), m, MPI_INT, recv.data(), sc, displs.data(), MPI_INT, c.comm, &req);
      default: return Cart_iallgatherw(send.data(), m, MPI_INT, recv.data(), sc, bdispls.data(), types.data(), c.comm, &req);
    }
  }
};

// 12 persistent requests (6 ops x direct/combining, different block sizes and dim orders, so
// different round counts) plus 6 non-blocking calls and a blocking call per iteration: 18+
// requests alive together. Every rank starts them in the same order; tests, sleeps and wait
// orders are random per rank.
void stress(Harness& h, const char* label, const std::vector<int>& periods) {
  const std::vector<std::vector<int>> offsets = {{0, 0},  {1, 0},  {-1, 0}, {0, 1}, {0, -1}, {1, 1},
                                                 {-1, -1}, {1, -1}, {-1, 1}, {2, 0}, {1, 0}};
  Cart c = make_cart(h, periods, offsets);
  std::vector<Field> persistent, nonblocking;
  int id = 0;
  for (int op = 0; op < 6; ++op)
    for (const char* algo : {"direct", "combining"}) {
      Field f;
      f.name = std::string("persistent op ") + std::to_string(op) + " " + algo;
      f.op = op;
      f.m = 1 + (id % 3);
      f.id = id++;
      f.setup(c);
      MPI_Info info = algo_info(algo, id % 2 ? "auto" : "1,0");
      // Half the requests end every message with a trailer (engine/lower.h): its byte lives in
      // the request's own staging, which other requests in flight must never touch.
      if (op % 2 == 0) {
        MPI_Info_set(info, "cartplan_trailer_min_bytes", "0");
        f.name += " trailed";
      }
      h.check(f.post(c, &info) == MPI_SUCCESS, f.name + " init: " + Cart_error_message());
      MPI_Info_free(&info);
      if (op % 2 == 0) {  // the trailers are in the program the request runs (if it sends at all)
        char* program = nullptr;
        h.check(Cart_request_program(f.req, &program) == MPI_SUCCESS, f.name + ": Cart_request_program");
        const std::string text = program ? program : "";
        Cart_free_plan_json(program);
        h.check(text.find("\"direction\":\"send\"") == std::string::npos || text.find("\"trailer\":true") != std::string::npos,
                f.name + ": no trailer in the program");
      }
      persistent.push_back(std::move(f));
    }
  for (int op = 0; op < 6; ++op) {
    Field f;
    f.name = std::string("non-blocking op ") + std::to_string(op);
    f.op = op;
    f.m = 1 + op % 2;
    f.id = id++;
    f.setup(c);
    nonblocking.push_back(std::move(f));
  }
  Field blocking;
  blocking.op = 0;
  blocking.m = 2;
  blocking.id = id++;
  blocking.setup(c);

  std::mt19937 rng(1234u + static_cast<unsigned>(c.me) * 7919u);  // rank-dependent progress
  bool ok = true;
  std::string first_failure;
  const int iterations = 60;
  for (int it = 0; it < iterations; ++it) {
    for (Field& f : persistent) f.fill(c, it);
    for (Field& f : nonblocking) f.fill(c, it);
    blocking.fill(c, it);
    // The same sequence of collective calls on every rank: starts (half through Cart_startall),
    // non-blocking calls, and one blocking call in the middle.
    std::vector<Cart_Request> batch;
    for (std::size_t k = 0; k < persistent.size(); ++k) {
      if (k < persistent.size() / 2) {
        ok = ok && Cart_start(&persistent[k].req) == MPI_SUCCESS;
      } else {
        batch.push_back(persistent[k].req);
      }
      if (k == 3) {
        for (Field& f : nonblocking) ok = ok && f.post(c, nullptr) == MPI_SUCCESS;
        ok = ok && Cart_alltoall(blocking.send.data(), blocking.m, MPI_INT, blocking.recv.data(), blocking.m, MPI_INT, c.comm) == MPI_SUCCESS;
        if (!blocking.check(c, it) && first_failure.empty()) first_failure = "blocking call";
      }
      // Rank-dependent progress between starts.
      if (rng() % 3 == 0) {
        Field& any = persistent[rng() % (k + 1)];
        int flag = 0;
        if (any.req && k < persistent.size() / 2) ok = ok && Cart_test(&any.req, &flag) == MPI_SUCCESS;
      }
      if (rng() % 5 == 0) usleep(rng() % 200);
    }
    ok = ok && Cart_startall(static_cast<int>(batch.size()), batch.data()) == MPI_SUCCESS;
    // Complete everything in a random order, with tests and sleeps first.
    std::vector<Cart_Request*> all;
    for (Field& f : persistent) all.push_back(&f.req);
    for (Field& f : nonblocking) all.push_back(&f.req);
    std::shuffle(all.begin(), all.end(), rng);
    for (Cart_Request* r : all) {
      const int mode = static_cast<int>(rng() % 3);
      if (mode == 0) {
        ok = ok && Cart_wait(r) == MPI_SUCCESS;
      } else {
        int flag = 0;
        while (ok && !flag) {
          ok = Cart_test(r, &flag) == MPI_SUCCESS;
          if (!flag && mode == 2) usleep(rng() % 100);
        }
      }
    }
    for (const Field& f : persistent)
      if (!f.check(c, it) && first_failure.empty()) first_failure = f.name + " at iteration " + std::to_string(it);
    for (const Field& f : nonblocking) {
      if (!f.check(c, it) && first_failure.empty()) first_failure = f.name + " at iteration " + std::to_string(it);
      if (f.req != CART_REQUEST_NULL && first_failure.empty()) first_failure = f.name + ": wait did not free the request";
    }
  }
  h.check(ok, std::string(label) + ": every call succeeds: ") ;
  h.check(first_failure.empty(), std::string(label) + ": wrong data: " + first_failure);
  // Cart_waitall and Cart_testall over the persistent requests.
  for (Field& f : persistent) f.fill(c, iterations);
  std::vector<Cart_Request> reqs;
  for (Field& f : persistent) reqs.push_back(f.req);
  h.check(Cart_startall(static_cast<int>(reqs.size()), reqs.data()) == MPI_SUCCESS, "startall");
  int flag = 0;
  for (int k = 0; k < 1000000 && !flag; ++k) h.check(Cart_testall(static_cast<int>(reqs.size()), reqs.data(), &flag) == MPI_SUCCESS, "testall");
  h.check(flag == 1, "testall completes");
  for (const Field& f : persistent) h.check(f.check(c, iterations), std::string(label) + ": testall data of " + f.name);
  h.check(Cart_startall(static_cast<int>(reqs.size()), reqs.data()) == MPI_SUCCESS &&
              Cart_waitall(static_cast<int>(reqs.size()), reqs.data()) == MPI_SUCCESS,
          "startall + waitall");
  for (Field& f : persistent) h.check(Cart_request_free(&f.req) == MPI_SUCCESS, "free " + f.name);
  MPI_Comm_free(&c.comm);
}

// MPI_Comm_dup keeps the neighbourhood; the duplicate is its own matching space, so a request
// in flight on the original and calls on the duplicate never cross.
void duplicate(Harness& h) {
  Cart c = make_cart(h, {1, 0}, {{1, 0}, {-1, 0}, {0, 1}, {0, -1}, {1, 1}});
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(c.comm, &dup);
  int t = 0;
  h.check(Cart_neighbor_count(dup, &t) == MPI_SUCCESS && t == c.t, "the duplicate has the neighbourhood");
  Field a, b;
  a.op = 0;
  a.id = 1;
  a.setup(c);
  b.op = 3;
  b.id = 2;
  b.setup(c);
  MPI_Info info = algo_info("combining");
  h.check(a.post(c, &info) == MPI_SUCCESS, "init on the original");
  MPI_Info_free(&info);
  Cart dc = c;
  dc.comm = dup;
  for (int it = 0; it < 20; ++it) {
    a.fill(c, it);
    b.fill(c, it);
    h.check(Cart_start(&a.req) == MPI_SUCCESS, "start on the original");
    h.check(Cart_allgather(b.send.data(), 1, MPI_INT, b.recv.data(), 1, MPI_INT, dup) == MPI_SUCCESS, "blocking on the duplicate");
    h.check(Cart_wait(&a.req) == MPI_SUCCESS, "wait on the original");
    h.check(a.check(c, it) && b.check(dc, it), "original and duplicate deliver their own data");
  }
  Cart_request_free(&a.req);
  MPI_Comm_free(&dup);
  MPI_Comm_free(&c.comm);
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  reproduction(h);
  stress(h, "torus", {1, 1});
  stress(h, "mesh", {1, 0});
  duplicate(h);
  return h.finish("inflight_test");
}
