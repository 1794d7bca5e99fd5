// The drop-in on distributed graphs that are not a stencil (cartplan's graph collectives): every
// call is compared byte for byte with the same call made through PMPI_ (Open MPI's own) on the
// same communicator in the same run. Graphs: Erdos-Renyi (engine/graph/generators.h) and Moore
// graphs with random holes (r = 1, periodic: duplicate and self edges on small grids), each
// rank's lists shuffled per rank, theta 1..4 from the graph's Info. Calls: allgather, alltoall,
// allgatherv and alltoallv with rank-dependent data and per-edge counts that include zero-size
// blocks and gaps between blocks, each blocking, non-blocking (completed with MPI_Wait,
// MPI_Waitall, MPI_Waitany or an MPI_Testsome loop, mixed with a plain request) and persistent
// (MPIX_Neighbor_*_init, started three times with MPI_Start or MPI_Startall). Each graph is
// also duplicated (MPI_Comm_dup) and one call checked there.
//
//   interpose_graph_test [--trials N] [--algorithm auto|direct|combining] [--expect-accelerated]
// --algorithm sets CARTPLAN_INTERPOSE_ALGORITHM before MPI_Init (the linked drop-in reads it);
// --expect-accelerated: every graph must be taken by the drop-in and, unless it happens to be a
// stencil, every call run by cartplan's graph collectives (CARTPLAN_Graph_collectives,
// CARTPLAN_Accelerated_calls), so a pass-through does not count; with --algorithm combining too,
// every non-blocking call must run on its op's chain of calls that reuse sizes, with no size
// pass (graph_sized_chain.h: every non-blocking graph call runs as a v form there).
#include <mpi.h>
#include <mpi-ext.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backends/mpi/graph_sized_calls.h"
#include "backends/mpi/graph_sizes.h"
#include "engine/graph/generators.h"
#include "tests/mpi/harness.h"

extern "C" int CARTPLAN_Interposed(MPI_Comm comm);
extern "C" long CARTPLAN_Accelerated_calls(MPI_Comm comm);
extern "C" int CARTPLAN_Graph_collectives(MPI_Comm comm);

namespace {

using cartplan::mpitest::Harness;
using cartplan::ir::graph::Topology;

enum class Op { kAllgather, kAlltoall, kAllgatherv, kAlltoallv };
enum class Form { kBlocking, kNonblocking, kPersistent };
const char* op_name(Op op) {
  static const char* n[] = {"allgather", "alltoall", "allgatherv", "alltoallv"};
  return n[static_cast<int>(op)];
}
const char* form_name(Form f) {
  static const char* n[] = {"blocking", "non-blocking", "persistent"};
  return n[static_cast<int>(f)];
}

// The graph of a trial, the same on every rank: Erdos-Renyi, or a Moore graph with holes whose
// remaining cells number exactly p (grids and seeds tried in order until one fits).
Topology graph_of(int p, int trial) {
  for (std::uint64_t seed = 1; trial % 2 == 0 && seed < 1000; ++seed) {  // with at least one edge
    Topology t = *cartplan::engine::graph::erdos_renyi(p, trial % 4 == 0 ? 0.4 : 0.7, seed * 1000 + trial);
    if (t.edges() > 0) return t;
  }
  for (std::uint64_t seed = 1; seed < 2000; ++seed)
    for (int a = 1; a <= 2 * p; ++a)
      for (int b = 1; a * b <= 2 * p; ++b) {
        if (a * b < p) continue;
        auto t = cartplan::engine::graph::moore({a, b}, 1, true, 0.3, seed * 131 + trial);
        if (t && t->size() == p && (a * b > p || seed > 1)) return *t;
      }
  return *cartplan::engine::graph::moore(cartplan::engine::graph::balanced_dims(p, 2), 1, true, 0.0, 1);
}

// Per-edge counts, the same at both ends: (origin, target, nth edge between them); 0..3 ints.
int edge_count(int origin, int target, int nth, int trial) { return static_cast<int>((origin * 7 + target * 13 + nth * 5 + trial) % 4); }
int rank_count(int rank, int trial) { return (rank * 3 + trial) % 4; }
int nth_of(const std::vector<int>& list, int k) { return static_cast<int>(std::count(list.begin(), list.begin() + k, list[k])); }

struct Test {
  Test(Harness& harness, int t) : h(harness), trial(t) {}
  Harness& h;
  int trial = 0;
  std::vector<int> sources, dests;
  MPI_Comm comm = MPI_COMM_NULL;
  int uniform = 1;  // ints per block of the uniform calls
  bool combining = false;  // --algorithm combining and --expect-accelerated
};

// The arguments of one call: send and receive counts and displacements (in ints, gaps between
// blocks), and the send buffer filled with rank-, call- and block-dependent data.
struct Args {
  std::vector<int> scounts, sdispls, rcounts, rdispls, send;
  int scount = 0, rcount = 0, rsize = 0;
};

Args args_for(const Test& t, Op op, int salt) {
  Args a;
  const int me = t.h.rank, out = static_cast<int>(t.dests.size()), in = static_cast<int>(t.sources.size());
  const bool gather = op == Op::kAllgather || op == Op::kAllgatherv;
  for (int k = 0; k < (gather ? 1 : out); ++k) {
    const int c = op == Op::kAlltoallv ? edge_count(me, t.dests[k], nth_of(t.dests, k), t.trial)
                  : op == Op::kAllgatherv ? rank_count(me, t.trial) : t.uniform;
    a.sdispls.push_back(op == Op::kAlltoallv ? static_cast<int>(a.send.size()) + 1 : static_cast<int>(a.send.size()));
    a.send.resize(static_cast<std::size_t>(a.sdispls.back()) + c, -7);
    for (int i = 0; i < c; ++i) a.send[static_cast<std::size_t>(a.sdispls.back() + i)] = ((salt * 64 + me) * 64 + k) * 8 + i;
    a.scounts.push_back(c);
  }
  a.scount = a.scounts.empty() ? t.uniform : a.scounts[0];
  if (a.send.empty()) a.send.push_back(0);
  for (int j = 0; j < in; ++j) {
    const int c = op == Op::kAlltoallv ? edge_count(t.sources[j], me, nth_of(t.sources, j), t.trial)
                  : op == Op::kAllgatherv ? rank_count(t.sources[j], t.trial) : t.uniform;
    a.rdispls.push_back(op == Op::kAllgatherv || op == Op::kAlltoallv ? a.rsize + 1 : a.rsize);
    a.rcounts.push_back(c);
    a.rsize = a.rdispls.back() + c;
  }
  a.rcount = t.uniform;
  a.rsize += 1;
  a.scounts.resize(std::max<std::size_t>(a.scounts.size(), 1));
  a.sdispls.resize(std::max<std::size_t>(a.sdispls.size(), 1));
  a.rcounts.resize(std::max<std::size_t>(a.rcounts.size(), 1));
  a.rdispls.resize(std::max<std::size_t>(a.rdispls.size(), 1));
  return a;
}

// The call itself: through the drop-in (MPI_ / MPIX_) or Open MPI's own (PMPI_, blocking only).
int call(const Test& t, Op op, Form form, bool pmpi, const Args& a, int* recv, MPI_Request* r) {
  const int* s = a.send.data();
  if (pmpi) {
    switch (op) {
      case Op::kAllgather: return PMPI_Neighbor_allgather(s, a.scount, MPI_INT, recv, a.rcount, MPI_INT, t.comm);
      case Op::kAlltoall: return PMPI_Neighbor_alltoall(s, a.scount, MPI_INT, recv, a.rcount, MPI_INT, t.comm);
      case Op::kAllgatherv: return PMPI_Neighbor_allgatherv(s, a.scount, MPI_INT, recv, a.rcounts.data(), a.rdispls.data(), MPI_INT, t.comm);
      case Op::kAlltoallv:
        return PMPI_Neighbor_alltoallv(s, a.scounts.data(), a.sdispls.data(), MPI_INT, recv, a.rcounts.data(), a.rdispls.data(), MPI_INT, t.comm);
    }
  }
  const int* sc = a.scounts.data(), *sd = a.sdispls.data(), *rc = a.rcounts.data(), *rd = a.rdispls.data();
  switch (form) {
    case Form::kBlocking:
      if (op == Op::kAllgather) return MPI_Neighbor_allgather(s, a.scount, MPI_INT, recv, a.rcount, MPI_INT, t.comm);
      if (op == Op::kAlltoall) return MPI_Neighbor_alltoall(s, a.scount, MPI_INT, recv, a.rcount, MPI_INT, t.comm);
      if (op == Op::kAllgatherv) return MPI_Neighbor_allgatherv(s, a.scount, MPI_INT, recv, rc, rd, MPI_INT, t.comm);
      return MPI_Neighbor_alltoallv(s, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, t.comm);
    case Form::kNonblocking:
      if (op == Op::kAllgather) return MPI_Ineighbor_allgather(s, a.scount, MPI_INT, recv, a.rcount, MPI_INT, t.comm, r);
      if (op == Op::kAlltoall) return MPI_Ineighbor_alltoall(s, a.scount, MPI_INT, recv, a.rcount, MPI_INT, t.comm, r);
      if (op == Op::kAllgatherv) return MPI_Ineighbor_allgatherv(s, a.scount, MPI_INT, recv, rc, rd, MPI_INT, t.comm, r);
      return MPI_Ineighbor_alltoallv(s, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, t.comm, r);
    case Form::kPersistent:
      if (op == Op::kAllgather) return MPIX_Neighbor_allgather_init(s, a.scount, MPI_INT, recv, a.rcount, MPI_INT, t.comm, MPI_INFO_NULL, r);
      if (op == Op::kAlltoall) return MPIX_Neighbor_alltoall_init(s, a.scount, MPI_INT, recv, a.rcount, MPI_INT, t.comm, MPI_INFO_NULL, r);
      if (op == Op::kAllgatherv)
        return MPIX_Neighbor_allgatherv_init(s, a.scount, MPI_INT, recv, rc, rd, MPI_INT, t.comm, MPI_INFO_NULL, r);
      return MPIX_Neighbor_alltoallv_init(s, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, t.comm, MPI_INFO_NULL, r);
  }
  return MPI_ERR_OTHER;
}

// Completes `r` together with a plain self message, in one of four ways (by `how`).
int complete_mixed(MPI_Request* r, int how) {
  int token = how, got = -1;
  MPI_Request reqs[3] = {*r, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  MPI_Irecv(&got, 1, MPI_INT, 0, 91, MPI_COMM_SELF, &reqs[1]);
  MPI_Isend(&token, 1, MPI_INT, 0, 91, MPI_COMM_SELF, &reqs[2]);
  int rc = MPI_SUCCESS;
  if (how % 4 == 0) {
    rc = MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    rc |= MPI_Waitall(2, reqs + 1, MPI_STATUSES_IGNORE);
  } else if (how % 4 == 1) {
    rc = MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE);
  } else {
    for (int left = 3; left > 0 && rc == MPI_SUCCESS;) {
      int idx = 0, out = 0, idxs[3];
      if (how % 4 == 2) rc = MPI_Waitany(3, reqs, &idx, MPI_STATUS_IGNORE), out = idx == MPI_UNDEFINED ? 0 : 1;
      else rc = MPI_Testsome(3, reqs, &out, idxs, MPI_STATUSES_IGNORE);
      if (out == MPI_UNDEFINED) break;
      left -= out;
    }
  }
  *r = reqs[0];
  return rc | (got == how ? MPI_SUCCESS : MPI_ERR_OTHER);
}

void compare(Test& t, Op op, Form form, const std::vector<int>& mine, const std::vector<int>& theirs, int round, const char* where) {
  t.h.check(mine == theirs, std::string(where) + " trial " + std::to_string(t.trial) + " " + op_name(op) + " " + form_name(form) +
                                " round " + std::to_string(round) + ": differs from Open MPI's");
}

// One op in one form: three rounds of fresh data, each against PMPI's result.
void run_form(Test& t, Op op, Form form) {
  MPI_Request r = MPI_REQUEST_NULL;
  Args a = args_for(t, op, 0);
  std::vector<int> recv(static_cast<std::size_t>(a.rsize), -1), expect(recv.size(), -1);
  if (form == Form::kPersistent) t.h.check(call(t, op, form, false, a, recv.data(), &r) == MPI_SUCCESS, "init");
  for (int round = 0; round < 3; ++round) {
    const Args fresh = args_for(t, op, round + 1);
    a.send = fresh.send;  // the same addresses for the persistent request
    std::fill(recv.begin(), recv.end(), -1);
    std::fill(expect.begin(), expect.end(), -1);
    int rc = MPI_SUCCESS;
    if (form == Form::kBlocking) {
      rc = call(t, op, form, false, a, recv.data(), &r);
    } else if (form == Form::kNonblocking) {
      rc = call(t, op, form, false, a, recv.data(), &r);
      rc |= complete_mixed(&r, round + t.trial);
    } else {
      rc = round % 2 ? MPI_Startall(1, &r) : MPI_Start(&r);
      rc |= complete_mixed(&r, round + t.trial);
    }
    t.h.check(rc == MPI_SUCCESS, std::string(op_name(op)) + " " + form_name(form) + " returned an error");
    call(t, op, Form::kBlocking, true, a, expect.data(), nullptr);
    compare(t, op, form, recv, expect, round, "graph");
  }
  if (form == Form::kPersistent) MPI_Request_free(&r);
}

// MPI_Neighbor_allgather (blocking and non-blocking) sending from MPI_BOTTOM with a datatype
// that holds the block's absolute address, as MPI allows, against PMPI_Neighbor_allgather.
void bottom_allgather(Test& t) {
  for (Form form : {Form::kBlocking, Form::kNonblocking}) {
    const Args a = args_for(t, Op::kAllgather, 9);
    std::vector<int> recv(static_cast<std::size_t>(a.rsize), -1), expect(recv.size(), -1);
    MPI_Aint at = 0;
    MPI_Get_address(a.send.data(), &at);
    const int one = 1;
    MPI_Datatype absolute = MPI_DATATYPE_NULL;  // a.scount ints at the send block's address
    MPI_Type_create_hindexed(1, &a.scount, &at, MPI_INT, &absolute);
    MPI_Type_commit(&absolute);
    int rc = MPI_SUCCESS;
    if (form == Form::kBlocking) {
      rc = MPI_Neighbor_allgather(MPI_BOTTOM, one, absolute, recv.data(), a.rcount, MPI_INT, t.comm);
    } else {
      MPI_Request r = MPI_REQUEST_NULL;
      rc = MPI_Ineighbor_allgather(MPI_BOTTOM, one, absolute, recv.data(), a.rcount, MPI_INT, t.comm, &r);
      rc |= complete_mixed(&r, t.trial + 1);
    }
    MPI_Type_free(&absolute);
    t.h.check(rc == MPI_SUCCESS, std::string("allgather from MPI_BOTTOM ") + form_name(form) + " returned an error");
    call(t, Op::kAllgather, Form::kBlocking, true, a, expect.data(), nullptr);
    compare(t, Op::kAllgather, form, recv, expect, 0, "allgather from MPI_BOTTOM");
  }
}

// MPI_Neighbor_alltoallw (blocking and non-blocking) on MPI_BOTTOM with the blocks' absolute
// addresses as displacements, as MPI allows, against PMPI_Neighbor_alltoallv on the buffers;
// then bottom_allgather. Returns how many of its 4 calls the drop-in ran.
long bottom_calls(Test& t) {
  const long before = CARTPLAN_Accelerated_calls(t.comm);
  for (Form form : {Form::kBlocking, Form::kNonblocking}) {
    const Args a = args_for(t, Op::kAlltoallv, 7);
    std::vector<int> recv(static_cast<std::size_t>(a.rsize), -1), expect(recv.size(), -1);
    std::vector<MPI_Aint> sd, rd;
    for (int d : a.sdispls) sd.push_back(0), MPI_Get_address(a.send.data() + d, &sd.back());
    for (int d : a.rdispls) rd.push_back(0), MPI_Get_address(recv.data() + d, &rd.back());
    const std::vector<MPI_Datatype> st(a.scounts.size(), MPI_INT), rt(a.rcounts.size(), MPI_INT);
    int rc = MPI_SUCCESS;
    if (form == Form::kBlocking) {
      rc = MPI_Neighbor_alltoallw(MPI_BOTTOM, a.scounts.data(), sd.data(), st.data(), MPI_BOTTOM, a.rcounts.data(), rd.data(), rt.data(), t.comm);
    } else {
      MPI_Request r = MPI_REQUEST_NULL;
      rc = MPI_Ineighbor_alltoallw(MPI_BOTTOM, a.scounts.data(), sd.data(), st.data(), MPI_BOTTOM, a.rcounts.data(), rd.data(), rt.data(),
                                   t.comm, &r);
      rc |= complete_mixed(&r, t.trial);
    }
    t.h.check(rc == MPI_SUCCESS, std::string("alltoallw on MPI_BOTTOM ") + form_name(form) + " returned an error");
    call(t, Op::kAlltoallv, Form::kBlocking, true, a, expect.data(), nullptr);
    compare(t, Op::kAlltoallv, form, recv, expect, 0, "alltoallw on MPI_BOTTOM");
  }
  bottom_allgather(t);
  return CARTPLAN_Accelerated_calls(t.comm) - before;
}

MPI_Comm create(Test& t, std::mt19937& mine) {
  const Topology g = graph_of(t.h.size, t.trial);
  t.sources = g.ranks[static_cast<std::size_t>(t.h.rank)].in;
  t.dests = g.ranks[static_cast<std::size_t>(t.h.rank)].out;
  std::shuffle(t.sources.begin(), t.sources.end(), mine);
  std::shuffle(t.dests.begin(), t.dests.end(), mine);
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_theta", std::to_string(1 + t.trial % 4).c_str());
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(t.sources.size()), t.sources.data(), MPI_UNWEIGHTED,
                                 static_cast<int>(t.dests.size()), t.dests.data(), MPI_UNWEIGHTED, info, 0, &comm);
  MPI_Info_free(&info);
  return comm;
}

void run_trial(Test& t, std::mt19937& mine, bool expect) {
  t.comm = create(t, mine);
  t.uniform = 1 + t.trial % 3;
  const long before = CARTPLAN_Accelerated_calls(t.comm);
  if (expect) t.h.check(CARTPLAN_Interposed(t.comm) == 1, "trial " + std::to_string(t.trial) + ": the graph is taken");
  long calls = 0;
  long chained = 0, passes = 0;  // non-blocking calls run on a chain, size passes they started
  for (Op op : {Op::kAllgather, Op::kAlltoall, Op::kAllgatherv, Op::kAlltoallv})
    for (Form form : {Form::kBlocking, Form::kNonblocking, Form::kPersistent}) {
      const auto stats = cartplan::mpi::sized_call_stats();
      const auto passes_before = cartplan::mpi::size_passes_started();
      run_form(t, op, form);
      calls += form == Form::kPersistent ? 1 : 3;
      if (form != Form::kNonblocking) continue;
      chained += static_cast<long>(cartplan::mpi::sized_call_stats().requests - stats.requests);
      passes += static_cast<long>(cartplan::mpi::size_passes_started() - passes_before);
    }
  const long bottom = bottom_calls(t);
  calls += 4;
  if (expect && CARTPLAN_Graph_collectives(t.comm))
    t.h.check(bottom == 4, "trial " + std::to_string(t.trial) + ": the calls on MPI_BOTTOM ran through cartplan (" + std::to_string(bottom) + " of 4)");
  if (t.combining && CARTPLAN_Graph_collectives(t.comm))
    t.h.check(chained == 12 && passes == 0, "trial " + std::to_string(t.trial) + ": every non-blocking call ran on its chain (" +
                                                std::to_string(chained) + " of 12), with no size pass (" + std::to_string(passes) + ")");
  // A graph that happens to be a stencil runs the stencil's path, whose non-persistent v forms
  // pass through: only the graph collectives must take every call.
  if (expect && CARTPLAN_Graph_collectives(t.comm))
    t.h.check(CARTPLAN_Accelerated_calls(t.comm) - before == calls,
              "trial " + std::to_string(t.trial) + ": every call ran through cartplan (" +
                  std::to_string(CARTPLAN_Accelerated_calls(t.comm) - before) + " of " + std::to_string(calls) + ")");
  MPI_Comm original = t.comm;
  MPI_Comm_dup(original, &t.comm);
  if (expect) t.h.check(CARTPLAN_Interposed(t.comm) == 1, "the duplicate is taken");
  run_form(t, Op::kAlltoallv, Form::kNonblocking);
  MPI_Comm_free(&t.comm);
  MPI_Comm_free(&original);
}

}  // namespace

int main(int argc, char** argv) {
  int trials = 8;
  bool expect = false, combining = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--trials") && i + 1 < argc) trials = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--algorithm") && i + 1 < argc) {
      combining = !std::strcmp(argv[i + 1], "combining");
      setenv("CARTPLAN_INTERPOSE_ALGORITHM", argv[++i], 1);
    }
    else if (!std::strcmp(argv[i], "--expect-accelerated")) expect = true;
  }
  Harness h(&argc, &argv);
  std::mt19937 mine(static_cast<unsigned>(h.rank * 7919 + 1));
  for (int trial = 0; trial < trials; ++trial) {
    Test t(h, trial);
    t.combining = combining && expect;
    run_trial(t, mine, expect);
  }
  return h.finish("interpose_graph_test");
}
