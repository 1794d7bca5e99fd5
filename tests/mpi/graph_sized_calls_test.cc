// Blocking graph v calls that reuse the previous call's sizes (graph_sized_calls.h): alltoallv
// and allgatherv against Open MPI's MPI_Neighbor_alltoallv/allgatherv in the same run, byte for
// byte (sentinel bytes in the gaps included), on random multigraphs with parallel and self edges
// and a periodic Moore graph, pairing, cumulative and grid forced: a sequence of calls whose counts
// stay the same, change on one rank only (and at its peers), change back, then move to new
// buffers; also into a derived, non-contiguous receive type. The process's counters
// (sized_call_stats) show that the steady calls send nothing with sizes, so the test cannot pass
// by always taking the slow path. A burst of calls with no other collective between them and
// rank-dependent sleeps lets ranks run calls ahead of their peers while the modes change from
// call to call. Then counts that differ between the two ends of an edge, on the first call and
// in the steady state: MPI_ERR_TRUNCATE on the receiving rank, no hang, and correct calls after.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "backends/mpi/graph_sized_calls.h"
#include "engine/graph/generators.h"
#include "tests/graph/random_graphs.h"
#include "tests/mpi/graph_v_fixture.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;
using namespace cartplan::mpitest::graph_v;
namespace graph = cartplan::engine::graph;

// The call on `g` (cartplan's, or Open MPI's with `reference`).
int call(const Graph& g, bool reference, const std::vector<int>& send, std::vector<int>* recv, const Sides& s) {
  if (g.gather) {
    auto* fn = reference ? &MPI_Neighbor_allgatherv : &Cart_graph_neighbor_allgatherv;
    return fn(send.data() + 1, s.sc[0], MPI_INT, recv->data(), s.rc.data(), s.rd.data(), g.rtype, g.comm);
  }
  auto* fn = reference ? &MPI_Neighbor_alltoallv : &Cart_graph_neighbor_alltoallv;
  return fn(send.data(), s.sc.data(), s.sd.data(), MPI_INT, recv->data(), s.rc.data(), s.rd.data(), g.rtype, g.comm);
}

// One blocking call against Open MPI's on fresh buffers of this variant; returns the counters'
// change. The send data carries a serial number of the call, so a call that received the
// previous call's messages differs from Open MPI's.
Delta one_call(Harness& h, const Graph& g, std::vector<int>* send, std::vector<int>* mine, const Sides& s, const std::string& what) {
  static int serial = 0;
  ++serial;
  if (send->size() < static_cast<std::size_t>(s.sbytes)) {
    h.check(false, what + ": the test's send buffer is too small");
    return {};
  }
  for (std::size_t i = 0; i < send->size(); ++i) (*send)[i] = serial * 10000000 + h.rank * 100000 + static_cast<int>(i) * 7 + 1;
  std::vector<int> ref(s.rbytes * g.stride, -7);
  mine->assign(s.rbytes * g.stride, -7);
  call(g, true, *send, &ref, s);
  const cartplan::mpi::SizedCallStats before = cartplan::mpi::sized_call_stats();
  h.check(call(g, false, *send, mine, s) == MPI_SUCCESS, what + ": returns MPI_SUCCESS");
  h.check(*mine == ref, what + ": every byte equals Open MPI's");
  return delta_since(before);
}

// Eight calls back to back with no other collective between them, the changer's counts
// alternating (so modes change every call), rank-dependent sleeps so that some ranks run calls
// ahead of their peers; each call into its own buffer, compared with Open MPI's afterwards.
void burst(Harness& h, const Graph& g, std::vector<int>* send, const std::vector<Sides>& variants, const std::string& name) {
  std::vector<std::vector<int>> ref(variants.size()), mine(8);
  for (std::size_t v = 0; v < variants.size(); ++v) {
    ref[v].assign(variants[v].rbytes * g.stride, -7);
    call(g, true, *send, &ref[v], variants[v]);
  }
  for (std::size_t i = 0; i < mine.size(); ++i) {
    const Sides& s = variants[i / 2 % variants.size()];  // v0 v0 v1 v1 v0 v0 v1 v1: each change, then the same again
    mine[i].assign(s.rbytes * g.stride, -7);
    if ((h.rank + static_cast<int>(i)) % 3 == 0) usleep(static_cast<useconds_t>(1000 * (1 + h.rank % 2)));
    h.check(call(g, false, *send, &mine[i], s) == MPI_SUCCESS, name + " burst call " + std::to_string(i) + ": returns MPI_SUCCESS");
  }
  for (std::size_t i = 0; i < mine.size(); ++i)
    h.check(mine[i] == ref[i / 2 % variants.size()], name + " burst call " + std::to_string(i) + ": every byte equals Open MPI's");
}

// Same counts, a change on one rank, back, new buffers: every call equals Open MPI's, and the
// counters say which calls sent with sizes.
void sequence(Harness& h, const Graph& g, const std::string& name) {
  const int changer = h.size - 1;
  auto at = [&](int v, int skew) { return sides(g.in, g.out, h.rank, v, changer, skew, g.gather); };
  Sides s = at(0, 0);
  std::vector<int> send(std::max(s.sbytes, at(1, 0).sbytes)), mine;  // large enough for every variant
  const Delta first = one_call(h, g, &send, &mine, s, name + " call 1");
  h.check(first.calls == h.size && first.as_before == 0, name + " call 1: every rank ran the sized path, nothing as before");
  Delta steady;
  for (int i = 2; i <= 3; ++i) steady = one_call(h, g, &send, &mine, s, name + " call " + std::to_string(i));
  const bool predefined = g.rtype == MPI_INT;  // else the layouts are rebuilt every call (a derived handle may be reused)
  h.check(steady.with_sizes == 0 && (steady.layouts == 0 || !predefined), name + " same counts: nothing sent with sizes, no layout built");
  h.check(first.with_sizes == 0 || steady.as_before == first.with_sizes, name + " same counts: every message as before");
  if (h.rank == 0)
    std::printf("%s: first call %ld messages with sizes; a steady call %ld as before, %ld with sizes\n", name.c_str(), first.with_sizes,
                steady.as_before, steady.with_sizes);
  const Delta changed = one_call(h, g, &send, &mine, at(1, 0), name + " rank " + std::to_string(changer) + "'s counts changed");
  std::vector<int> changer_sends(1, 0);  // its out-edges to other ranks (self edges are copies)
  for (std::size_t k = 0; h.rank == changer && k < g.out.size(); ++k) changer_sends[0] += g.out[k] != changer;
  MPI_Bcast(changer_sends.data(), 1, MPI_INT, changer, MPI_COMM_WORLD);
  h.check(changer_sends[0] == 0 || changed.with_sizes > 0, name + " one rank's counts changed: something sent with sizes");
  const Delta back = one_call(h, g, &send, &mine, s, name + " counts back");
  h.check(changer_sends[0] == 0 || back.with_sizes > 0, name + " counts back: something sent with sizes");
  one_call(h, g, &send, &mine, s, name + " counts back, again");
  // New allocations while the old ones are alive: other addresses, a wider receive layout.
  const Sides moved = at(0, 1);
  std::vector<int> send2(send.size() + 5), mine2;
  const Delta move = one_call(h, g, &send2, &mine2, moved, name + " new buffers");
  h.check(move.with_sizes == 0, name + " new buffers, same counts: nothing sent with sizes");
  h.check(first.with_sizes == 0 || move.layouts > 0, name + " new buffers: layouts rebuilt locally");
  const Delta again = one_call(h, g, &send2, &mine2, moved, name + " new buffers, again");
  h.check(again.with_sizes == 0 && (again.layouts == 0 || !predefined), name + " new buffers again: reused");
  // Double buffering: the two buffer sets alternated, each laid out once above, keep their layouts.
  one_call(h, g, &send, &mine, s, name + " first buffers again");
  long alt_layouts = 0, alt_sizes = 0;
  for (int i = 0; i < 4; ++i) {
    const Delta d = i % 2 ? one_call(h, g, &send, &mine, s, name + " double-buffered call " + std::to_string(i))
                          : one_call(h, g, &send2, &mine2, moved, name + " double-buffered call " + std::to_string(i));
    alt_layouts += d.layouts, alt_sizes += d.with_sizes;
  }
  h.check(alt_sizes == 0 && (alt_layouts == 0 || !predefined), name + " two buffer sets alternated: nothing with sizes, no layout built");
  for (int i = 0; i < 2; ++i) one_call(h, g, &send2, &mine2, at(2, 1), name + " empty blocks " + std::to_string(i));
  one_call(h, g, &send2, &mine2, moved, name + " after empty blocks");
  burst(h, g, &send2, {at(0, 0), at(1, 0)}, name);
}

// Counts that differ between the ends of an edge on one rank (the lowest with an in-edge), one
// larger or (`smaller`, where it is not 0) one smaller than its sender's: its call fails with
// MPI_ERR_TRUNCATE, nobody hangs, and the next correct calls equal Open MPI's on every rank
// (a smaller count truncates a message: the receives still pending must not be left to the
// next call). Other ranks succeed, or, in the steady state, fail with MPI_ERR_TRUNCATE when a
// block of theirs travelled in the victim's bad message (it is forwarded as lost, not as data).
// `relays_recv`: the grid's allgather forwards a block from the recv block where it landed
// (grid_schedule.h), so the victim's bad recv block can reach the ranks it relays to on the
// first call too: they may fail with MPI_ERR_TRUNCATE then as well.
void mismatch(Harness& h, const Graph& g, const std::string& name, int victim, bool warm, bool smaller, bool relays_recv) {
  const Sides good = sides(g.in, g.out, h.rank, 0, -1, 0, g.gather);
  Sides bad = good;
  if (h.rank == victim) bad.rc[0] += smaller && bad.rc[0] > 0 ? -1 : 1;
  std::vector<int> send(good.sbytes + 1), mine;
  if (warm) one_call(h, g, &send, &mine, good, name + " warm-up");
  mine.assign((bad.rbytes + 1) * g.stride, 0);
  const int rc = call(g, false, send, &mine, bad);
  int cls = MPI_SUCCESS;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  const std::string what = name + (warm ? " (steady state)" : " (first call)") + ": recv count " + (smaller ? "smaller" : "larger") +
                           " than its sender's";
  if (h.rank == victim || (!warm && !relays_recv)) h.check(cls == (h.rank == victim ? MPI_ERR_TRUNCATE : MPI_SUCCESS), what + ": MPI_ERR_TRUNCATE on the receiver");
  else h.check(cls == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE, what + ": MPI_SUCCESS or MPI_ERR_TRUNCATE elsewhere");
  one_call(h, g, &send, &mine, good, what + ", then a correct call");
  one_call(h, g, &send, &mine, good, what + ", then a second correct call");
}

// A rank that cannot send its own blocks on the first call (set_unsendable_send_blocks there: as
// for a non-contiguous block too large for MPI_Pack): its messages go with the blocks marked
// lost, it returns MPI_ERR_COUNT, their receivers MPI_ERR_TRUNCATE ("did not arrive", also where
// a forwarded block was lost), nobody hangs, and the next correct calls equal Open MPI's everywhere.
void unsendable(Harness& h, const Graph& g, const std::string& name, int victim) {
  const Sides good = sides(g.in, g.out, h.rank, 0, -1, 0, g.gather);
  std::vector<int> send(good.sbytes + 1), mine(good.rbytes * g.stride, 0);
  if (h.rank == victim) cartplan::mpi::set_unsendable_send_blocks(true);
  const int rc = call(g, false, send, &mine, good);
  if (h.rank == victim) cartplan::mpi::set_unsendable_send_blocks(false);
  int cls = MPI_SUCCESS;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  const std::string what = name + ": rank " + std::to_string(victim) + " cannot send its blocks";
  // (MPI_SUCCESS where its blocks only go to itself, as copies: nothing to pack)
  if (h.rank == victim) h.check(cls == MPI_ERR_COUNT || cls == MPI_SUCCESS, what + ": MPI_ERR_COUNT there");
  else h.check(cls == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE, what + ": MPI_SUCCESS or MPI_ERR_TRUNCATE elsewhere");
  one_call(h, g, &send, &mine, good, what + ", then a correct call");
  one_call(h, g, &send, &mine, good, what + ", then a second correct call");
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  const int p = h.size;
  MPI_Datatype strided;
  MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &strided);
  MPI_Type_commit(&strided);
  std::vector<const char*> algorithms = {"pairing", "cumulative", "grid"};
  if (cartplan::mpitest::has_3d_grid(p)) algorithms.push_back("grid3");  // grid on the 3-D grid (Info cartplan_grid_dims=3)
  for (const char* algorithm : algorithms) {
    std::vector<std::pair<std::string, cartplan::ir::graph::Topology>> graphs;
    graphs.emplace_back("random multigraph", graph::random_multigraph(p, 0.5, 11));
    graphs.emplace_back("dense random multigraph", graph::random_multigraph(p, 0.8, 12));
    // Combining forwards most blocks through temp slots here (parallel and self edges at small p).
    if (auto m = graph::moore(graph::balanced_dims(p, 2), 1, true, 0.0, 1)) graphs.emplace_back("periodic Moore 2-D r=1", *m);
    for (const auto& [label, t] : graphs) {
      for (int form = 0; form < 3; ++form) {  // alltoallv, allgatherv, alltoallv into a strided type
        const bool gather = form == 1;
        const std::string name = std::string(form == 0 ? "alltoallv, " : form == 1 ? "allgatherv, " : "alltoallv strided, ") + algorithm + ", " + label;
        Graph g = make_graph(t, h.rank, algorithm, gather);
        if (form == 2) g.rtype = strided, g.stride = 2;
        sequence(h, g, name);
        MPI_Comm_free(&g.comm);
        if (form == 0) {  // messages with sizes above 16 bytes as large-count ones (as above INT_MAX)
          Graph large = make_graph(t, h.rank, algorithm, gather);
          cartplan::mpi::set_large_message_bytes(16);
          sequence(h, large, name + " (large-count messages)");
          cartplan::mpi::set_large_message_bytes(static_cast<std::size_t>(INT_MAX));
          MPI_Comm_free(&large.comm);
        }
        int victim = g.in.empty() ? p : h.rank;
        MPI_Allreduce(MPI_IN_PLACE, &victim, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        for (int c = 0; c < 4; ++c) {  // first call or steady state, count larger or smaller
          Graph fresh = make_graph(t, h.rank, algorithm, gather);
          if (form == 2) fresh.rtype = strided, fresh.stride = 2;
          if (victim < p) mismatch(h, fresh, name, victim, c % 2 == 1, c >= 2, gather && cartplan::mpitest::is_grid(algorithm));
          MPI_Comm_free(&fresh.comm);
        }
        Graph fresh = make_graph(t, h.rank, algorithm, gather);
        if (form == 2) fresh.rtype = strided, fresh.stride = 2;
        unsendable(h, fresh, name, p - 1);
        MPI_Comm_free(&fresh.comm);
      }
    }
  }
  MPI_Type_free(&strided);
  return h.finish("graph_sized_calls_test");
}
