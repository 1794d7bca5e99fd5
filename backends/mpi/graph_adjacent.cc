// Cart_graph_comm_create_adjacent: argument checks agreed across ranks, the edge multiset check,
// and the two ways to the communicator (MPI's distributed graph, or a duplicate with an attribute).
#include "backends/mpi/graph_adjacent.h"

#include <climits>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "backends/mpi/comm_keyval.h"
#include "backends/mpi/info_options.h"
#include "backends/mpi/progressing_wait.h"

namespace cartplan::mpi {
namespace {

#ifdef CARTPLAN_SMPI
constexpr bool kMpiHasDistGraph = false;  // SMPI 3.32: declared, aborts with "Not yet implemented"
#else
constexpr bool kMpiHasDistGraph = true;
#endif

int copy_lists(MPI_Comm, int, void*, void* in, void* out, int* flag) {
  const auto* from = static_cast<const AdjacentLists*>(in);
  auto* to = new AdjacentLists{from->edges, MPI_INFO_NULL};
  if (from->info != MPI_INFO_NULL) MPI_Info_dup(from->info, &to->info);
  *static_cast<void**>(out) = to;
  *flag = 1;
  return MPI_SUCCESS;
}

int delete_lists(MPI_Comm, int, void* attr, void*) {
  auto* lists = static_cast<AdjacentLists*>(attr);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && lists->info != MPI_INFO_NULL) MPI_Info_free(&lists->info);
  delete lists;
  return MPI_SUCCESS;
}

int keyval() {
  static int key = MPI_KEYVAL_INVALID;
  static const bool created = (create_state_keyval(copy_lists, delete_lists, &key), true);
  (void)created;
  return key;
}

// One edge a -> b, spread over 64 bits (splitmix64's finaliser): summed over a multiset of edges
// it is the same for every order, and two different multisets collide with probability ~2^-64.
std::uint64_t edge_hash(int a, int b) {
  std::uint64_t z = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) | static_cast<std::uint32_t>(b);
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

MpiStatus check_list(const char* name, int degree, const int list[], int size) {
  const std::string n = name;
  if (degree < 0) return mpi_error(MPI_ERR_ARG, (n == "sources" ? "indegree" : "outdegree") + std::string(" = ") + std::to_string(degree) + " (expected >= 0)");
  if (degree > 0 && !list) return mpi_error(MPI_ERR_ARG, n + " is NULL with " + std::to_string(degree) + " entries");
  for (int i = 0; i < degree; ++i) {
    if (list[i] >= 0 && list[i] < size) continue;
    const std::string v = list[i] == MPI_PROC_NULL ? "MPI_PROC_NULL" : std::to_string(list[i]);
    return mpi_error(MPI_ERR_RANK, n + "[" + std::to_string(i) + "] = " + v + " is not a rank of the communicator [0, " +
                                       std::to_string(size - 1) + "] (a distributed graph names ranks only)");
  }
  return {};
}

// This rank's own arguments; *attribute says which way the communicator is made.
MpiStatus check_local(int indegree, const int sources[], int outdegree, const int destinations[], MPI_Info info,
                      MPI_Comm* graphcomm, int size, bool* attribute) {
  if (!graphcomm) return mpi_error(MPI_ERR_ARG, "graphcomm is NULL");
  MpiStatus s = check_list("sources", indegree, sources, size);
  if (s.ok()) s = check_list("destinations", outdegree, destinations, size);
  if (!s.ok()) return s;
  bool present = false;
  const std::string way = info_value(info, "cartplan_graph_comm", &present);
  *attribute = !kMpiHasDistGraph;
  if (!present || way == "auto") return {};
  if (way == "attribute") *attribute = true;
  else if (way != "dist_graph")
    return mpi_error(MPI_ERR_INFO_VALUE, "Info cartplan_graph_comm = '" + way + "' (expected auto, dist_graph or attribute)");
  else if (!kMpiHasDistGraph)
    return mpi_error(MPI_ERR_UNSUPPORTED_OPERATION, "Info cartplan_graph_comm = dist_graph: this MPI library (SMPI) has no MPI_Dist_graph_create_adjacent; use auto or attribute");
  return {};
}

// Every rank learns the lowest error class and the lowest rank that has it; a rank with a
// local error keeps its own message. The call's first wait for its peers: it advances the
// process's pending requests meanwhile (progressing_wait.h), since a peer may need one of them
// to reach this call. Once it completed every rank is inside the call, so the collectives after
// it (the check, the duplicate or MPI_Dist_graph_create_adjacent) block in MPI.
MpiStatus agree(MpiStatus local, int rank, MPI_Comm comm) {
  int mine[2] = {local.ok() ? INT_MAX : local.code, rank}, first[2] = {INT_MAX, 0};
  CARTPLAN_MPI_CALL(progressing_allreduce(mine, first, 1, MPI_2INT, MPI_MINLOC, comm));
  if (first[0] == INT_MAX) return {};
  if (!local.ok()) return local;
  return mpi_error(first[0], "rank " + std::to_string(first[1]) + " passed bad arguments to Cart_graph_comm_create_adjacent");
}

// The lists describe one graph, and every rank makes the communicator the same way (an Info
// value that differs between ranks would send some into MPI_Dist_graph_create_adjacent and
// others into MPI_Comm_dup: a hang). One reduction checks both.
MpiStatus check_one_graph(int rank, int size, int indegree, const int sources[], int outdegree, const int destinations[],
                          bool attribute, MPI_Comm comm) {
  std::uint64_t mine[2] = {0, attribute ? 1u : 0u}, sum[2] = {0, 0};  // [0]: out-edges minus in-edges, mod 2^64
  for (int k = 0; k < outdegree; ++k) mine[0] += edge_hash(rank, destinations[k]);
  for (int j = 0; j < indegree; ++j) mine[0] -= edge_hash(sources[j], rank);
  CARTPLAN_MPI_CALL(MPI_Allreduce(mine, sum, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm));
  if (sum[1] != 0 && sum[1] != static_cast<std::uint64_t>(size))
    return mpi_error(MPI_ERR_INFO_VALUE, "Info cartplan_graph_comm: " + std::to_string(sum[1]) + " of " + std::to_string(size) +
                                             " ranks make the communicator as an attribute, the others with MPI_Dist_graph_create_adjacent (give every rank the same value)");
  if (sum[0] != 0)
    return mpi_error(MPI_ERR_TOPOLOGY, "the ranks' lists do not describe one graph: some edge a -> b appears a different number of times among a's destinations and among b's sources");
  return {};
}

MpiStatus attach(MPI_Comm comm, int indegree, const int sources[], int outdegree, const int destinations[], MPI_Info info,
                 MPI_Comm* graphcomm) {
  MPI_Comm dup = MPI_COMM_NULL;
  CARTPLAN_MPI_CALL(MPI_Comm_dup(comm, &dup));
  auto lists = std::make_unique<AdjacentLists>();
  lists->edges.in.assign(sources, sources + indegree);
  lists->edges.out.assign(destinations, destinations + outdegree);
  if (info != MPI_INFO_NULL) MPI_Info_dup(info, &lists->info);
  const int rc = MPI_Comm_set_attr(dup, keyval(), lists.get());
  if (rc != MPI_SUCCESS) {
    if (lists->info != MPI_INFO_NULL) MPI_Info_free(&lists->info);
    MPI_Comm_free(&dup);
    return from_mpi(rc, "MPI_Comm_set_attr");
  }
  lists.release();
  *graphcomm = dup;
  return {};
}

}  // namespace

MpiStatus create_adjacent(MPI_Comm comm, int indegree, const int sources[], int outdegree, const int destinations[],
                          MPI_Info info, MPI_Comm* graphcomm) {
  if (comm == MPI_COMM_NULL) return mpi_error(MPI_ERR_COMM, "the communicator is MPI_COMM_NULL");
  int inter = 0, rank = 0, size = 1;
  CARTPLAN_MPI_CALL(MPI_Comm_test_inter(comm, &inter));
  if (inter) return mpi_error(MPI_ERR_COMM, "an intercommunicator cannot carry a distributed graph");
  CARTPLAN_MPI_CALL(MPI_Comm_rank(comm, &rank));
  CARTPLAN_MPI_CALL(MPI_Comm_size(comm, &size));
  bool attribute = false;
  if (graphcomm) *graphcomm = MPI_COMM_NULL;  // what the caller holds after an error
  MpiStatus s = agree(check_local(indegree, sources, outdegree, destinations, info, graphcomm, size, &attribute), rank, comm);
  if (s.ok()) s = check_one_graph(rank, size, indegree, sources, outdegree, destinations, attribute, comm);
  if (!s.ok()) return s;
  if (attribute) return attach(comm, indegree, sources, outdegree, destinations, info, graphcomm);
  int dummy = 0;
  CARTPLAN_MPI_CALL(MPI_Dist_graph_create_adjacent(comm, indegree, indegree ? sources : &dummy, MPI_UNWEIGHTED, outdegree,
                                                   outdegree ? destinations : &dummy, MPI_UNWEIGHTED, info, 0, graphcomm));
  return {};
}

const AdjacentLists* adjacent_lists(MPI_Comm comm) {
  void* attr = nullptr;
  int flag = 0;
  if (comm == MPI_COMM_NULL || MPI_Comm_get_attr(comm, keyval(), &attr, &flag) != MPI_SUCCESS || !flag) return nullptr;
  return static_cast<const AdjacentLists*>(attr);
}

}  // namespace cartplan::mpi
