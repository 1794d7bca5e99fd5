// The v forms' size pass: the schedule run once with one size per block instead of data.
#include "backends/mpi/graph_sizes.h"

#include <string>

namespace cartplan::mpi {
namespace {

using ir::graph::LocKind;

// What this rank knows of a location's size now (-1: a temp slot not yet received).
std::int64_t size_at(const ir::graph::Loc& loc, const std::vector<std::int64_t>& send, const std::vector<std::int64_t>& recv,
                     const std::vector<std::int64_t>& temps) {
  const std::size_t i = static_cast<std::size_t>(loc.index);
  return loc.kind == LocKind::kSend ? send.at(i) : loc.kind == LocKind::kRecv ? recv.at(i) : temps.at(i);
}

}  // namespace

MpiStatus learn_temp_sizes(GraphShared& shared, int lane, const ir::graph::RankSchedule& schedule,
                           const std::vector<std::int64_t>& send_bytes, const std::vector<std::int64_t>& recv_bytes,
                           std::vector<std::int64_t>* temp_bytes) {
  if (static_cast<std::int64_t>(kSizeRound + schedule.phases.size()) > shared.lanes.max_rounds())
    return mpi_error(MPI_ERR_TAG, "the schedule's size pass does not fit in this communicator's tag space");
  temp_bytes->assign(schedule.temps.size(), -1);
  MpiStatus error;
  for (std::size_t f = 0; f < schedule.phases.size(); ++f) {
    const ir::graph::GraphPhase& ph = schedule.phases[f];
    const int tag = shared.lanes.tag(lane, kSizeRound + static_cast<int>(f));
    std::vector<std::vector<std::int64_t>> out(ph.sends.size()), in(ph.recvs.size());
    std::vector<MPI_Request> requests;
    for (std::size_t m = 0; m < ph.recvs.size(); ++m) {
      in[m].resize(ph.recvs[m].parts.size());
      requests.emplace_back();
      CARTPLAN_MPI_CALL(MPI_Irecv(in[m].data(), static_cast<int>(in[m].size()), MPI_INT64_T, ph.recvs[m].peer, tag, shared.exec,
                                  &requests.back()));
    }
    for (std::size_t m = 0; m < ph.sends.size(); ++m) {
      for (const ir::graph::Part& part : ph.sends[m].parts) out[m].push_back(size_at(part.loc, send_bytes, recv_bytes, *temp_bytes));
      requests.emplace_back();
      CARTPLAN_MPI_CALL(MPI_Isend(out[m].data(), static_cast<int>(out[m].size()), MPI_INT64_T, ph.sends[m].peer, tag, shared.exec,
                                  &requests.back()));
    }
    CARTPLAN_MPI_CALL(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
    for (std::size_t m = 0; m < ph.recvs.size(); ++m) {
      for (std::size_t k = 0; k < in[m].size(); ++k) {
        const ir::graph::Part& part = ph.recvs[m].parts[k];
        const std::size_t i = static_cast<std::size_t>(part.loc.index);
        if (part.loc.kind == LocKind::kTemp) {
          (*temp_bytes)[i] = in[m][k];
        } else if (part.loc.kind == LocKind::kRecv && recv_bytes.at(i) != in[m][k] && error.ok()) {
          error = mpi_error(MPI_ERR_TRUNCATE, "recv block " + std::to_string(i) + " (from rank " + std::to_string(ph.recvs[m].peer) +
                                                  ") has " + std::to_string(recv_bytes.at(i)) + " bytes, its block " +
                                                  ir::graph::to_string(part.block) + " has " + std::to_string(in[m][k]) +
                                                  "; counts must match on both ends of an edge");
        }
      }
    }
  }
  for (std::int64_t& t : *temp_bytes)
    if (t < 0) t = 0;  // a sender that did not know it sent -1: its own error names it
  return error;
}

}  // namespace cartplan::mpi
