// Registering, duplicating and releasing accelerated communicators.
#include "backends/interpose/comm_table.h"

#include <cstdio>
#include <unordered_map>

#include "backends/interpose/detect.h"
#include "backends/interpose/guard.h"
#include "engine/neighborhood.h"

namespace cartplan::interpose {
namespace {

std::unordered_map<MPI_Comm, std::unique_ptr<AcceleratedComm>>& table() {
  static std::unordered_map<MPI_Comm, std::unique_ptr<AcceleratedComm>> t;
  return t;
}

std::string join(const std::vector<int>& v, const char* sep) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + std::to_string(v[i]);
  return s;
}

std::string plan_summary(mpi::NeighborhoodComm& nc, ir::Op op) {
  std::shared_ptr<const mpi::BoundPlanEntry> entry;
  mpi::MpiStatus s = nc.plan_for(op, nc.options(), 8, &entry);
  if (!s.ok()) return std::string(ir::to_string(op)) + " unplanned (" + s.message + ")";
  return std::string(ir::to_string(op)) + " " + ir::to_string(entry->plan.algorithm()) + " " +
         std::to_string(entry->plan.stats().rounds) + " rounds";
}

void report(MPI_Comm graph, const Detection& det, AcceleratedComm* acc) {
  static int serial = 0;
  ++serial;
  if (!verbose()) return;
  int rank = 0, size = 0;
  PMPI_Comm_rank(graph, &rank);
  PMPI_Comm_size(graph, &size);
  std::string line;
  if (acc) {
    line = "accelerated: grid " + join(det.dims, "x") + " periods " + join(det.periods, ",") + " (from " + det.grid_source +
           "), t=" + std::to_string(acc->nc->nbh().nonzero_count()) + " offsets (" + std::to_string(acc->nc->nbh().size()) +
           " blocks), at 8-byte blocks: " + plan_summary(*acc->nc, ir::Op::kAlltoall) + ", " +
           plan_summary(*acc->nc, ir::Op::kAllgather);
  } else {
    line = "not accelerated: " + det.why;
  }
  if (rank == 0) std::fprintf(stderr, "cartplan_interpose: communicator %d (%d ranks) %s\n", serial, size, line.c_str());
}

}  // namespace

void on_graph_created(MPI_Comm graph, MPI_Info info) {
  Inside inside;
  Detection det = detect(graph, info);
  std::unique_ptr<AcceleratedComm> acc;
  if (det.accelerated) {
    // cartplan addresses peers by row-major grid rank on its internal communicator.
    MPI_Comm internal = MPI_COMM_NULL;
    const int rc = det.row_major ? PMPI_Comm_dup(graph, &internal) : PMPI_Comm_split(graph, 0, det.grid_rank, &internal);
    if (rc == MPI_SUCCESS) {
      PMPI_Comm_set_errhandler(internal, MPI_ERRORS_RETURN);
      std::vector<bool> per(det.periods.begin(), det.periods.end());
      engine::Grid grid = *engine::Grid::create(det.dims, per);
      engine::Neighborhood nbh = *engine::Neighborhood::create(static_cast<int>(det.dims.size()), det.nbh);
      acc = std::make_unique<AcceleratedComm>();
      acc->nc = std::make_unique<mpi::NeighborhoodComm>(internal, std::move(nbh), std::move(grid), det.coords, det.options);
      acc->nc->shared()->user = graph;
      acc->order = std::move(det.order);
      acc->indegree = det.indegree;
      acc->outdegree = det.outdegree;
    } else {
      det.why = "MPI_Comm_dup of the graph communicator failed";
    }
  }
  report(graph, det, acc.get());
  if (acc) table()[graph] = std::move(acc);
}

void on_comm_dup(MPI_Comm old_comm, MPI_Comm new_comm) {
  AcceleratedComm* old = find_comm(old_comm);
  if (!old || new_comm == MPI_COMM_NULL) return;
  Inside inside;
  MPI_Comm internal = MPI_COMM_NULL;
  if (PMPI_Comm_dup(old->nc->internal(), &internal) != MPI_SUCCESS) return;
  PMPI_Comm_set_errhandler(internal, MPI_ERRORS_RETURN);
  auto acc = std::make_unique<AcceleratedComm>();
  acc->nc = std::make_unique<mpi::NeighborhoodComm>(*old->nc, internal);
  acc->nc->shared()->user = new_comm;
  acc->order = old->order;
  acc->indegree = old->indegree;
  acc->outdegree = old->outdegree;
  table()[new_comm] = std::move(acc);
}

void on_comm_free(MPI_Comm comm) {
  auto& t = table();
  if (t.empty()) return;
  auto it = t.find(comm);
  if (it == t.end()) return;
  Inside inside;
  t.erase(it);
}

void clear_comms() {
  Inside inside;
  table().clear();
}

AcceleratedComm* find_comm(MPI_Comm comm) {
  auto& t = table();
  if (t.empty()) return nullptr;
  auto it = t.find(comm);
  return it == t.end() ? nullptr : it->second.get();
}

std::size_t accelerated_count() { return table().size(); }

}  // namespace cartplan::interpose
