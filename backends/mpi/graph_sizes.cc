// The v forms' size pass: the schedule run once with one size per block instead of data.
#include "backends/mpi/graph_sizes.h"

#include <atomic>
#include <string>
#include <utility>

#include "backends/mpi/completion.h"
#include "backends/mpi/progressing_wait.h"

namespace cartplan::mpi {
namespace {

using ir::graph::LocKind;

// What this rank knows of a location's size now (-1: a temp slot not yet received).
std::int64_t size_at(const ir::graph::Loc& loc, const std::vector<std::int64_t>& send, const std::vector<std::int64_t>& recv,
                     const std::vector<std::int64_t>& temps) {
  const std::size_t i = static_cast<std::size_t>(loc.index);
  return loc.kind == LocKind::kSend ? send.at(i) : loc.kind == LocKind::kRecv ? recv.at(i) : temps.at(i);
}

std::atomic<std::uint64_t> g_started{0};

}  // namespace

std::uint64_t size_passes_started() { return g_started.load(); }

SizePass::SizePass(GraphShared& shared, int lane, const ir::graph::RankSchedule& schedule, std::vector<std::int64_t> send_bytes,
                   std::vector<std::int64_t> recv_bytes)
    : shared_(shared), lane_(lane), schedule_(schedule), send_(std::move(send_bytes)), recv_(std::move(recv_bytes)),
      temps_(schedule.temps.size(), -1) {
  ++g_started;
  if (static_cast<std::int64_t>(kSizeRound + schedule_.phases.size()) > shared_.lanes.max_rounds()) {
    error_ = mpi_error(MPI_ERR_TAG, "the schedule's size pass does not fit in this communicator's tag space");
    phase_ = schedule_.phases.size();
  }
}

SizePass::~SizePass() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  for (MPI_Request& r : requests_)  // only after an MPI error: release what is left
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
}

MpiStatus SizePass::post(std::size_t f) {
  const ir::graph::GraphPhase& ph = schedule_.phases[f];
  const int tag = shared_.lanes.tag(lane_, kSizeRound + static_cast<int>(f));
  out_.assign(ph.sends.size(), {});
  in_.assign(ph.recvs.size(), {});
  requests_.clear();
  for (std::size_t m = 0; m < ph.recvs.size(); ++m) {
    in_[m].resize(ph.recvs[m].parts.size());
    requests_.emplace_back(MPI_REQUEST_NULL);
    CARTPLAN_MPI_CALL(MPI_Irecv(in_[m].data(), static_cast<int>(in_[m].size()), MPI_INT64_T, ph.recvs[m].peer, tag, shared_.exec,
                                &requests_.back()));
  }
  for (std::size_t m = 0; m < ph.sends.size(); ++m) {
    for (const ir::graph::Part& part : ph.sends[m].parts) out_[m].push_back(size_at(part.loc, send_, recv_, temps_));
    requests_.emplace_back(MPI_REQUEST_NULL);
    CARTPLAN_MPI_CALL(MPI_Isend(out_[m].data(), static_cast<int>(out_[m].size()), MPI_INT64_T, ph.sends[m].peer, tag, shared_.exec,
                                &requests_.back()));
  }
  return {};
}

// A completed phase: temp slots learn their sizes, recv blocks are checked.
void SizePass::take(std::size_t f) {
  const ir::graph::GraphPhase& ph = schedule_.phases[f];
  for (std::size_t m = 0; m < ph.recvs.size(); ++m) {
    for (std::size_t k = 0; k < in_[m].size(); ++k) {
      const ir::graph::Part& part = ph.recvs[m].parts[k];
      const std::size_t i = static_cast<std::size_t>(part.loc.index);
      if (part.loc.kind == LocKind::kTemp) {
        temps_[i] = in_[m][k];
      } else if (part.loc.kind == LocKind::kRecv && recv_.at(i) != in_[m][k] && error_.ok()) {
        error_ = mpi_error(MPI_ERR_TRUNCATE, "recv block " + std::to_string(i) + " (from rank " + std::to_string(ph.recvs[m].peer) +
                                                 ") has " + std::to_string(recv_.at(i)) + " bytes, its block " +
                                                 ir::graph::to_string(part.block) + " has " + std::to_string(in_[m][k]) +
                                                 "; counts must match on both ends of an edge");
      }
    }
  }
}

bool SizePass::advance(bool block, bool post_only) {
  while (phase_ < schedule_.phases.size()) {
    if (!posted_) {
      MpiStatus s = post(phase_);
      posted_ = true;
      if (!s.ok()) {
        error_ = s;
        phase_ = schedule_.phases.size();
        break;
      }
      if (post_only) return false;
    }
    int done = 1;
    const int n = static_cast<int>(requests_.size());
    MPI_Request* r = requests_.data();
    const int rc = !block       ? completion::testall(n, r, &done, MPI_STATUSES_IGNORE)
                   : progressing_ ? progressing_waitall(n, r, MPI_STATUSES_IGNORE)
                                  : completion::waitall(n, r, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) {
      error_ = from_mpi(rc, "the size pass");
      phase_ = schedule_.phases.size();
      break;
    }
    if (!done) return false;
    take(phase_);
    ++phase_;
    posted_ = false;
  }
  for (std::int64_t& t : temps_)
    if (t < 0) t = 0;  // a sender that did not know a size sent -1: its own error names it
  return true;
}

MpiStatus SizePass::run() {
  progressing_ = true;
  advance(true, false);
  return error_;
}

}  // namespace cartplan::mpi
