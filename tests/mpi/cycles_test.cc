// MPI test that reusing tag lanes stays correct and bounded: 10^5 persistent create/start/free
// cycles and 10^5 non-blocking calls (the non-blocking lanes wrap around many times), data
// checked every 1000 cycles and resident memory flat; a non-blocking request left in flight
// while its lane comes round again; and the persistent lanes used up and given back.
#include <mpi.h>

#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;
using cartplan::mpitest::resident_kb;

int value(int rank, int block, int cycle) { return ((cycle % 100000) * 64 + block) * 256 + rank; }

struct Ring {
  MPI_Comm comm = MPI_COMM_NULL;
  int me = 0, t = 4;
  std::vector<int> sources;
};

// A periodic ring with offsets +1, -1, +2, -2: direct has 4 rounds, combining the same here,
// so the dim order is varied through a 2-d grid instead.
Ring make_ring(Harness& h) {
  Ring r;
  int dims[2] = {h.size, 1}, periods[2] = {1, 1}, offs[8] = {1, 0, -1, 0, 2, 0, 0, 1};
  h.check(Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, 4, offs, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &r.comm) == MPI_SUCCESS,
          "creation");
  MPI_Comm_rank(r.comm, &r.me);
  r.sources.resize(4);
  std::vector<int> targets(4);
  Cart_neighbor_get(r.comm, 4, r.sources.data(), MPI_UNWEIGHTED, 4, targets.data(), MPI_UNWEIGHTED);
  return r;
}

bool fill_and_check(const Ring& r, std::vector<int>& send, const std::vector<int>& recv, int cycle, bool check) {
  bool ok = true;
  if (check)
    for (int i = 0; i < r.t; ++i) ok = ok && recv[i] == value(r.sources[i], i, cycle - 1);
  for (int i = 0; i < r.t; ++i) send[i] = value(r.me, i, cycle);
  return ok;
}

void persistent_cycles(Harness& h, const Ring& r, int cycles) {
  std::vector<int> send(4), recv(4, -1);
  MPI_Info direct, combining;
  MPI_Info_create(&direct);
  MPI_Info_set(direct, "cartplan_algorithm", "direct");
  MPI_Info_create(&combining);
  MPI_Info_set(combining, "cartplan_algorithm", "combining");
  bool ok = fill_and_check(r, send, recv, 0, false);
  long before = 0;
  for (int c = 0; c < cycles; ++c) {
    if (c == 1000) before = resident_kb();
    Cart_Request req = CART_REQUEST_NULL;
    ok = ok && Cart_alltoall_init(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, r.comm, c % 2 ? direct : combining, &req) == MPI_SUCCESS;
    ok = ok && Cart_start(&req) == MPI_SUCCESS && Cart_wait(&req) == MPI_SUCCESS && Cart_request_free(&req) == MPI_SUCCESS;
    ok = fill_and_check(r, send, recv, c + 1, c % 1000 == 999 || c < 10) && ok;
  }
  const long grown = resident_kb() - before;
  h.check(ok, std::to_string(cycles) + " persistent create/start/free cycles deliver the right data");
  h.check(grown < 2048, "persistent cycles: resident memory grew by " + std::to_string(grown) + " kB");
  MPI_Info_free(&direct);
  MPI_Info_free(&combining);
}

void nonblocking_cycles(Harness& h, const Ring& r, int cycles) {
  std::vector<int> send(4), recv(4, -1);
  bool ok = fill_and_check(r, send, recv, 0, false);
  long before = 0;
  for (int c = 0; c < cycles; ++c) {
    if (c == 1000) before = resident_kb();
    Cart_Request req = CART_REQUEST_NULL;
    ok = ok && Cart_ialltoall(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, r.comm, &req) == MPI_SUCCESS;
    // Half the time completed by polling, so ranks finish at different moments.
    if (c % 2) {
      int flag = 0;
      while (ok && !flag) ok = Cart_test(&req, &flag) == MPI_SUCCESS;
    } else {
      ok = ok && Cart_wait(&req) == MPI_SUCCESS;
    }
    ok = ok && req == CART_REQUEST_NULL;
    ok = fill_and_check(r, send, recv, c + 1, c % 1000 == 999 || c < 10) && ok;
  }
  const long grown = resident_kb() - before;
  h.check(ok, std::to_string(cycles) + " non-blocking calls deliver the right data");
  h.check(grown < 2048, "non-blocking cycles: resident memory grew by " + std::to_string(grown) + " kB");
}

// A non-blocking request stays in flight, not waited for, while 5000 more non-blocking calls go
// by: its lane comes round after 4096 calls (Open MPI's tag space), and reusing it must neither
// cross messages nor lose the old request's data.
void lane_wraps_while_in_flight(Harness& h, const Ring& r) {
  std::vector<int> old_send(4), old_recv(4, -1), send(4), recv(4, -1);
  for (int i = 0; i < 4; ++i) old_send[i] = value(r.me, i, 77777);
  Cart_Request old = CART_REQUEST_NULL;
  h.check(Cart_ialltoall(old_send.data(), 1, MPI_INT, old_recv.data(), 1, MPI_INT, r.comm, &old) == MPI_SUCCESS, "the old request");
  bool ok = true;
  for (int c = 0; c < 5000; ++c) {
    for (int i = 0; i < 4; ++i) send[i] = value(r.me, i, c);
    Cart_Request req = CART_REQUEST_NULL;
    ok = ok && Cart_ialltoall(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, r.comm, &req) == MPI_SUCCESS && Cart_wait(&req) == MPI_SUCCESS;
    for (int i = 0; i < 4; ++i) ok = ok && recv[i] == value(r.sources[i], i, c);
  }
  h.check(ok, "5000 calls while an old request holds its lane");
  h.check(Cart_wait(&old) == MPI_SUCCESS, "the old request completes");
  for (int i = 0; i < 4; ++i) h.check(old_recv[i] == value(r.sources[i], i, 77777), "the old request's data, block " + std::to_string(i));
}

// Persistent lanes are limited (1024 with Open MPI's tag space): the next init fails on every
// rank with MPI_ERR_NO_MEM, and freeing one request makes room again.
void persistent_lanes_used_up(Harness& h, const Ring& r) {
  MPI_Comm_set_errhandler(r.comm, MPI_ERRORS_RETURN);
  std::vector<int> send(4), recv(4);
  std::vector<Cart_Request> reqs;
  int rc = MPI_SUCCESS;
  while (rc == MPI_SUCCESS && reqs.size() < 5000) {
    Cart_Request req = CART_REQUEST_NULL;
    rc = Cart_alltoall_init(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, r.comm, MPI_INFO_NULL, &req);
    if (rc == MPI_SUCCESS) reqs.push_back(req);
  }
  h.check(rc == MPI_ERR_NO_MEM && reqs.size() == 1024, "lanes run out after 1024 persistent requests: " + std::to_string(reqs.size()) + " " + Cart_error_message());
  h.check(std::string(Cart_error_message()).find("persistent requests are alive") != std::string::npos, "lane message");
  Cart_request_free(&reqs[500]);
  Cart_Request again = CART_REQUEST_NULL;
  for (int i = 0; i < 4; ++i) send[i] = value(r.me, i, 5);
  h.check(Cart_alltoall_init(send.data(), 1, MPI_INT, recv.data(), 1, MPI_INT, r.comm, MPI_INFO_NULL, &again) == MPI_SUCCESS,
          "a freed lane is used again");
  h.check(Cart_start(&again) == MPI_SUCCESS && Cart_wait(&again) == MPI_SUCCESS, "run on the reused lane");
  for (int i = 0; i < 4; ++i) h.check(recv[i] == value(r.sources[i], i, 5), "data on the reused lane");
  Cart_request_free(&again);
  for (Cart_Request& q : reqs) Cart_request_free(&q);
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  int cycles = 100000;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--cycles") cycles = std::atoi(argv[i + 1]);
  Ring r = make_ring(h);
  persistent_cycles(h, r, cycles);
  nonblocking_cycles(h, r, cycles);
  lane_wraps_while_in_flight(h, r);
  persistent_lanes_used_up(h, r);
  MPI_Comm_free(&r.comm);
  return h.finish("cycles_test");
}
