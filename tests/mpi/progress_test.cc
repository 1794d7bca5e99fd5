// Progress in any MPI call (issue 34): a pending neighbourhood collective, non-blocking or
// persistent, with rank-dependent cross-dependencies on plain MPI calls. In every pattern one
// rank of a pair blocks in a plain MPI call (MPI_Recv, MPI_Probe, MPI_Ssend, MPI_Sendrecv,
// MPI_Barrier, MPI_Allreduce, MPI_Waitany, a MPI_Testsome loop) that its partner can only satisfy
// after its own collective completed, and the partner's collective needs the first rank's later
// phases. A correct MPI program: Open MPI's libnbc progresses its schedules inside any MPI call.
// Pairs and roles are drawn anew every iteration (the same random permutation on every rank),
// so whichever ranks a plan routes through, some iteration has a waiting rank that needs a
// blocked one; a rank left without a partner (odd np) only starts and waits.
//
// Grid: a periodic 2-D grid from MPI_Dims_create, the Moore neighbourhood of radius 1 (8 offsets,
// duplicates and self edges on small grids), one int per block, rank- and iteration-dependent
// data checked on every call. Two builds of this file:
//  - progress_test_mpi: standard MPI only (MPI_Dist_graph_create_adjacent, MPI_Ineighbor_*,
//    MPIX_Neighbor_*_init + MPI_Start). Run as it is (Open MPI itself: the program is correct),
//    with the drop-in preloaded or linked (progress_test_linked), forced to combining or auto.
//  - progress_test_native (CARTPLAN_NATIVE_API): the same patterns with cartplan's own API
//    (Cart_neighborhood_create, Cart_i*, Cart_*_init + Cart_start, Cart_wait / Cart_test).
//
// --holes (standard MPI build only): each rank drops about a quarter of its edges (the receiver
// drops the matching source), so the graph is no stencil and the drop-in runs it with cartplan's
// graph collectives (Info cartplan_theta = 2: combining schedules with several phases).
//
//   progress_test [--iterations N] [--expect-accelerated] [--algorithm auto|direct|combining] [--cart] [--holes]
// --expect-accelerated: the drop-in must be present (found with dlsym) and must have run every
// collective of the test through cartplan (CARTPLAN_Accelerated_calls), or, natively, every
// request must run a combining plan (Cart_request_plan). --algorithm: the native API's Info
// cartplan_algorithm; for the drop-in, CARTPLAN_INTERPOSE_ALGORITHM (set before MPI_Init, which
// is how the linked build gets it; a preloaded one may as well take it from mpirun -x).
// --cart: call MPI_Cart_create on the grid before building the graph, so that the drop-in reads
// the graph on that 2-D grid (without it, a graph that is complete, as at np = 6 and 9, is found
// first as a 1-D ring, whose combining plan has a single phase).
#include <dlfcn.h>
#include <mpi.h>
#include <mpi-ext.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#ifdef CARTPLAN_NATIVE_API
#include "backends/mpi/cartplan_mpi.h"
#endif

namespace {

enum class Pattern { kRecv, kProbe, kSsend, kSendrecv, kBarrier, kAllreduce, kWaitany, kTestsome };
const Pattern kPatterns[] = {Pattern::kRecv,    Pattern::kProbe,     Pattern::kSsend,   Pattern::kSendrecv,
                             Pattern::kBarrier, Pattern::kAllreduce, Pattern::kWaitany, Pattern::kTestsome};
const char* name(Pattern p) {
  static const char* names[] = {"MPI_Recv", "MPI_Probe", "MPI_Ssend", "MPI_Sendrecv", "MPI_Barrier", "MPI_Allreduce",
                                "MPI_Waitany", "MPI_Testsome"};
  return names[static_cast<int>(p)];
}

struct Setup {
  int rank = 0, size = 1, iterations = 30;
  bool expect_accelerated = false, cart = false, holes = false;
  std::string algorithm = "combining";
  std::vector<int> dims{0, 0};
  std::vector<int> offsets;  // t x 2, Moore r=1 without the zero offset
  std::vector<int> sources;  // row-major rank at -offset[i]
  std::vector<int> dests;    // row-major rank at +offset[i]
  std::vector<int> send_index, recv_index;  // the offset of each destination / source (holes drop some)
  long checks = 0, failures = 0;
  long collective_calls = 0;  // non-blocking calls and persistent inits on the test's communicator
  void check(bool ok, const std::string& what) {
    ++checks;
    if (!ok && ++failures <= 20) std::fprintf(stderr, "[rank %d] FAILED: %s\n", rank, what.c_str());
  }
};

int at(const Setup& s, int sign, int i) {
  int r = 0;
  for (int k = 0; k < 2; ++k) {
    const int c = (k == 0 ? s.rank / s.dims[1] : s.rank % s.dims[1]) + sign * s.offsets[2 * i + k];
    r = r * s.dims[k] + ((c % s.dims[k]) + s.dims[k]) % s.dims[k];
  }
  return r;
}

void make_grid(Setup& s) {
  MPI_Dims_create(s.size, 2, s.dims.data());
  for (int a = -1; a <= 1; ++a)
    for (int b = -1; b <= 1; ++b)
      if (a || b) s.offsets.insert(s.offsets.end(), {a, b});
  const int t = static_cast<int>(s.offsets.size() / 2);
  // A hole: rank r does not send over offset i (nor does r + offset i list r as a source there).
  auto hole = [&](int r, int i) { return s.holes && ((r * 2654435761u + i * 40503u + 12345u) >> 7) % 4 == 0; };
  for (int i = 0; i < t; ++i) {
    if (!hole(at(s, -1, i), i)) {
      s.sources.push_back(at(s, -1, i));
      s.recv_index.push_back(i);
    }
    if (!hole(s.rank, i)) {
      s.dests.push_back(at(s, +1, i));
      s.send_index.push_back(i);
    }
  }
}

int value(int rank, int block, int iter, int salt) { return ((iter * 8 + salt) * 512 + rank) * 16 + block; }

// One neighbourhood collective (alltoall or allgather), started non-blocking or persistent.
struct Collective {
  bool gather = false, persistent = false;
  std::vector<int> send, recv;
  MPI_Request request = MPI_REQUEST_NULL;  // the drop-in's / Open MPI's request
#ifdef CARTPLAN_NATIVE_API
  Cart_Request cart = CART_REQUEST_NULL;
#endif
};

// ---- the two APIs -------------------------------------------------------------------------

#ifdef CARTPLAN_NATIVE_API
using Comm = MPI_Comm;

Comm open_comm(Setup& s) {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", s.algorithm.c_str());
  const int periods[2] = {1, 1};
  MPI_Comm cart = MPI_COMM_NULL;
  const int t = static_cast<int>(s.offsets.size() / 2);
  if (Cart_neighborhood_create(MPI_COMM_WORLD, 2, s.dims.data(), periods, t, s.offsets.data(), MPI_UNWEIGHTED, info, 0,
                               &cart) != MPI_SUCCESS)
    MPI_Abort(MPI_COMM_WORLD, 2);
  MPI_Info_free(&info);
  return cart;
}

void init(Comm comm, Collective& c) {
  const int rc = c.gather ? Cart_allgather_init(c.send.data(), 1, MPI_INT, c.recv.data(), 1, MPI_INT, comm, MPI_INFO_NULL, &c.cart)
                          : Cart_alltoall_init(c.send.data(), 1, MPI_INT, c.recv.data(), 1, MPI_INT, comm, MPI_INFO_NULL, &c.cart);
  if (rc != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 3);
}

void start(Comm comm, Collective& c) {
  if (c.persistent) {
    Cart_start(&c.cart);
  } else if (c.gather) {
    Cart_iallgather(c.send.data(), 1, MPI_INT, c.recv.data(), 1, MPI_INT, comm, &c.cart);
  } else {
    Cart_ialltoall(c.send.data(), 1, MPI_INT, c.recv.data(), 1, MPI_INT, comm, &c.cart);
  }
}

void wait(Collective& c) { Cart_wait(&c.cart); }
// The request to put in a mixed array of MPI requests: none with the native API (its requests
// are not MPI_Requests); the patterns then wait for the collective separately.
MPI_Request* mixed(Collective&) { return nullptr; }

void release(Collective& c) {
  if (c.persistent) Cart_request_free(&c.cart);
}

// Both ops run the plan asked for (combining: the patterns really have later phases).
void check_accelerated(Setup& s, Comm comm) {
  for (int gather = 0; gather <= 1; ++gather) {
    Collective c;
    c.gather = gather != 0;
    c.send.assign(s.sources.size(), 0);
    c.recv.assign(s.sources.size(), 0);
    init(comm, c);
    char* json = nullptr;
    Cart_request_plan(c.cart, &json);
    s.check(json && std::strstr(json, ("\"algorithm\": \"" + s.algorithm + "\"").c_str()) != nullptr,
            std::string(gather ? "allgather" : "alltoall") + " runs the " + s.algorithm + " plan");
    Cart_free_plan_json(json);
    Cart_request_free(&c.cart);
  }
}
#else
using Comm = MPI_Comm;

Comm open_comm(Setup& s) {
  if (s.cart) {
    const int periods[2] = {1, 1};
    MPI_Comm cart = MPI_COMM_NULL;
    MPI_Cart_create(MPI_COMM_WORLD, 2, s.dims.data(), periods, 0, &cart);
    MPI_Comm_free(&cart);
  }
  MPI_Comm graph = MPI_COMM_NULL;
  MPI_Info info;
  MPI_Info_create(&info);
  if (s.holes) MPI_Info_set(info, "cartplan_theta", "2");
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(s.sources.size()), s.sources.data(), MPI_UNWEIGHTED,
                                 static_cast<int>(s.dests.size()), s.dests.data(), MPI_UNWEIGHTED, info, 0, &graph);
  MPI_Info_free(&info);
  return graph;
}

void init(Comm comm, Collective& c) {
  const int rc = c.gather
                     ? MPIX_Neighbor_allgather_init(c.send.data(), 1, MPI_INT, c.recv.data(), 1, MPI_INT, comm, MPI_INFO_NULL, &c.request)
                     : MPIX_Neighbor_alltoall_init(c.send.data(), 1, MPI_INT, c.recv.data(), 1, MPI_INT, comm, MPI_INFO_NULL, &c.request);
  if (rc != MPI_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 3);
}

void start(Comm comm, Collective& c) {
  if (c.persistent) {
    MPI_Start(&c.request);
  } else if (c.gather) {
    MPI_Ineighbor_allgather(c.send.data(), 1, MPI_INT, c.recv.data(), 1, MPI_INT, comm, &c.request);
  } else {
    MPI_Ineighbor_alltoall(c.send.data(), 1, MPI_INT, c.recv.data(), 1, MPI_INT, comm, &c.request);
  }
}

void wait(Collective& c) { MPI_Wait(&c.request, MPI_STATUS_IGNORE); }
MPI_Request* mixed(Collective& c) { return &c.request; }

void release(Collective& c) {
  if (c.persistent) MPI_Request_free(&c.request);
}

// The drop-in, if present, says how many collectives it ran itself on `comm`.
void check_accelerated(Setup& s, Comm comm) {
  using Count = long (*)(MPI_Comm);
  auto count = reinterpret_cast<Count>(dlsym(RTLD_DEFAULT, "CARTPLAN_Accelerated_calls"));
  s.check(count != nullptr, "the drop-in is loaded (CARTPLAN_Accelerated_calls found)");
  if (count)
    s.check(count(comm) >= s.collective_calls, "the drop-in ran every collective (" + std::to_string(count(comm)) + " of " +
                                                   std::to_string(s.collective_calls) + ")");
}
#endif

// ---- the patterns -----------------------------------------------------------------------------

void fill(const Setup& s, Collective& c, int iter) {
  for (std::size_t i = 0; i < c.send.size(); ++i) c.send[i] = value(s.rank, c.gather ? 0 : s.send_index[i], iter, 1);
  std::fill(c.recv.begin(), c.recv.end(), -1);
}

void verify(Setup& s, const Collective& c, int iter, Pattern p) {
  bool ok = true;
  for (std::size_t i = 0; i < c.recv.size(); ++i)
    ok = ok && c.recv[i] == value(s.sources[i], c.gather ? 0 : s.recv_index[i], iter, 1);
  s.check(ok, std::string(name(p)) + (c.persistent ? " persistent " : " non-blocking ") +
                  (c.gather ? "allgather" : "alltoall") + " iteration " + std::to_string(iter) + ": wrong data");
}

// Waits for the collective and for `extra` (a plain receive) together: in one MPI_Waitany /
// MPI_Testsome array where the API's request is an MPI_Request, else the plain request first.
void wait_mixed(Collective& c, MPI_Request* extra, bool some) {
  MPI_Request* coll = mixed(c);
  MPI_Request reqs[2] = {*extra, coll ? *coll : MPI_REQUEST_NULL};
  for (int done = 0; done < (coll ? 2 : 1);) {
    if (some) {
      int out = 0, idx[2];
      MPI_Testsome(2, reqs, &out, idx, MPI_STATUSES_IGNORE);
      if (out != MPI_UNDEFINED) done += out;
      if (out == MPI_UNDEFINED) break;
    } else {
      int idx = 0;
      MPI_Waitany(2, reqs, &idx, MPI_STATUS_IGNORE);
      if (idx == MPI_UNDEFINED) break;
      ++done;
    }
  }
  *extra = reqs[0];
  if (coll) *coll = reqs[1];
  if (!coll) wait(c);
}

// The rank that blocks in the plain call while its collective is pending.
void blocked_side(Setup& s, Collective& c, Pattern p, int partner, int iter) {
  const int tag = iter;
  int out = value(s.rank, 0, iter, 2), in = -1;
  MPI_Request r = MPI_REQUEST_NULL;
  switch (p) {
    case Pattern::kRecv: MPI_Recv(&in, 1, MPI_INT, partner, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE); break;
    case Pattern::kProbe:
      MPI_Probe(partner, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Recv(&in, 1, MPI_INT, partner, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      break;
    case Pattern::kSsend: MPI_Ssend(&out, 1, MPI_INT, partner, tag, MPI_COMM_WORLD); break;
    case Pattern::kSendrecv:
      MPI_Sendrecv(&out, 1, MPI_INT, partner, tag, &in, 1, MPI_INT, partner, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      break;
    case Pattern::kWaitany:
    case Pattern::kTestsome:
      MPI_Irecv(&in, 1, MPI_INT, partner, tag, MPI_COMM_WORLD, &r);
      wait_mixed(c, &r, p == Pattern::kTestsome);
      break;
    default: break;
  }
  if (p != Pattern::kSsend) s.check(in == value(partner, 0, iter, 2), std::string(name(p)) + ": the partner's message");
  if (p != Pattern::kWaitany && p != Pattern::kTestsome) wait(c);
}

// The rank that completes its collective first and only then serves its partner.
void waiting_side(Setup& s, Collective& c, Pattern p, int partner, int iter) {
  wait(c);
  const int tag = iter;
  int out = value(s.rank, 0, iter, 2), in = -1;
  if (p == Pattern::kSsend) {
    MPI_Recv(&in, 1, MPI_INT, partner, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    s.check(in == value(partner, 0, iter, 2), "MPI_Ssend: the partner's message");
  } else if (p == Pattern::kSendrecv) {
    MPI_Sendrecv(&out, 1, MPI_INT, partner, tag, &in, 1, MPI_INT, partner, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    s.check(in == value(partner, 0, iter, 2), "MPI_Sendrecv: the partner's message");
  } else {
    MPI_Send(&out, 1, MPI_INT, partner, tag, MPI_COMM_WORLD);
  }
}

// Barrier and allreduce: "blocked" ranks enter them before waiting, the others after.
void global_pattern(Setup& s, Collective& c, Pattern p, bool blocked, int iter) {
  if (!blocked) wait(c);
  if (p == Pattern::kBarrier) {
    MPI_Barrier(MPI_COMM_WORLD);
  } else {
    int mine = iter + s.rank, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    s.check(sum == iter * s.size + s.size * (s.size - 1) / 2, "MPI_Allreduce: the sum");
  }
  if (blocked) wait(c);
}

void iteration(Setup& s, Comm comm, Collective& c, Pattern p, int iter) {
  fill(s, c, iter);
  start(comm, c);
  if (!c.persistent) ++s.collective_calls;
  // Ranks in a shuffled order: positions (2j, 2j+1) are partners, the even position blocks.
  std::vector<int> order(s.size);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937 rng(static_cast<unsigned>(iter * 131 + static_cast<int>(p) * 7 + (c.gather ? 3 : 0) + (c.persistent ? 5 : 0)));
  std::shuffle(order.begin(), order.end(), rng);
  const int pos = static_cast<int>(std::find(order.begin(), order.end(), s.rank) - order.begin());
  const int partner = (pos ^ 1) < s.size ? order[pos ^ 1] : s.size;
  const bool blocked = pos % 2 == 0;
  if (p == Pattern::kBarrier || p == Pattern::kAllreduce) global_pattern(s, c, p, blocked, iter);
  else if (partner >= s.size) wait(c);
  else if (blocked) blocked_side(s, c, p, partner, iter);
  else waiting_side(s, c, p, partner, iter);
  verify(s, c, iter, p);
}

void run(Setup& s, Comm comm, bool gather, bool persistent) {
  Collective c;
  c.gather = gather;
  c.persistent = persistent;
  c.send.assign(gather ? 1 : s.dests.size(), 0);
  c.recv.assign(s.sources.size(), -1);
  if (persistent) {
    init(comm, c);
    ++s.collective_calls;
  }
  for (Pattern p : kPatterns)
    for (int iter = 0; iter < s.iterations; ++iter) iteration(s, comm, c, p, iter);
  release(c);
}

}  // namespace

int main(int argc, char** argv) {
  Setup s;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--iterations") && i + 1 < argc) s.iterations = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--algorithm") && i + 1 < argc) s.algorithm = argv[++i];
    else if (!std::strcmp(argv[i], "--expect-accelerated")) s.expect_accelerated = true;
    else if (!std::strcmp(argv[i], "--cart")) s.cart = true;
    else if (!std::strcmp(argv[i], "--holes")) s.holes = true;
  }
#ifdef CARTPLAN_NATIVE_API
  if (s.holes) {
    std::fprintf(stderr, "progress_test: --holes is for the standard MPI build (the native API here is Cartesian)\n");
    return 2;
  }
#endif
#ifndef CARTPLAN_NATIVE_API
  // The drop-in linked in (progress_test_linked) reads it at its first accelerated call.
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--algorithm")) setenv("CARTPLAN_INTERPOSE_ALGORITHM", s.algorithm.c_str(), 1);
#endif
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &s.size);
  make_grid(s);
  Comm comm = open_comm(s);
  for (int persistent = 0; persistent <= 1; ++persistent)
    for (int gather = 0; gather <= 1; ++gather) run(s, comm, gather != 0, persistent != 0);
  if (s.expect_accelerated) check_accelerated(s, comm);
  MPI_Comm_free(&comm);
  long totals[2] = {s.checks, s.failures}, sums[2] = {0, 0};
  MPI_Allreduce(totals, sums, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (s.rank == 0) std::printf("progress_test on %d ranks: %ld checks, %ld failed\n", s.size, sums[0], sums[1]);
  MPI_Finalize();
  return sums[1] == 0 ? 0 : 1;
}
