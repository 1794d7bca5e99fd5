// The MPI executor of graph schedules: messages with fixed arguments, struct datatypes over
// absolute addresses for messages of several blocks, phase by phase.
#include "backends/mpi/graph_exchange.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <string>
#include <utility>

#include "backends/mpi/completion.h"
#include "backends/mpi/graph_layout.h"

namespace cartplan::mpi {

using ir::graph::LocKind;

// What both ways of creating an exchange set up, or MPI_ERR_TAG.
MpiStatus GraphExchange::make(const std::shared_ptr<GraphShared>& shared, ir::graph::GraphAlgorithm algorithm,
                              ir::graph::RankSchedule schedule, Kind kind, int lane, bool progress_anywhere,
                              std::unique_ptr<GraphExchange>* out) {
  if (static_cast<std::int64_t>(schedule.phases.size()) > shared->lanes.max_rounds())
    return mpi_error(MPI_ERR_TAG, "the schedule has " + std::to_string(schedule.phases.size()) +
                                      " phases; this communicator's tag space allows " + std::to_string(shared->lanes.max_rounds()));
  auto x = std::unique_ptr<GraphExchange>(new GraphExchange());
  x->shared_ = shared;
  x->algorithm_ = algorithm;
  x->schedule_ = std::move(schedule);
  x->kind_ = kind;
  x->lane_ = lane;
  x->hook_phases_ = progress_anywhere;
  *out = std::move(x);
  return {};
}

MpiStatus GraphExchange::create(const std::shared_ptr<GraphShared>& shared, ir::graph::GraphAlgorithm algorithm,
                                ir::graph::RankSchedule schedule, const GraphBuffers& buffers, Kind kind, int lane,
                                bool progress_anywhere, std::unique_ptr<GraphExchange>* out) {
  std::unique_ptr<GraphExchange> x;
  MpiStatus s = make(shared, algorithm, std::move(schedule), kind, lane, progress_anywhere, &x);
  if (s.ok()) s = x->build(buffers);
  if (!s.ok()) return s;
  if (kind == Kind::kPersistent) shared->lanes.hold(lane);
  *out = std::move(x);
  return {};
}

MpiStatus GraphExchange::create_learning_sizes(const std::shared_ptr<GraphShared>& shared, ir::graph::GraphAlgorithm algorithm,
                                               ir::graph::RankSchedule schedule, const GraphBuffers& buffers, int lane,
                                               bool progress_anywhere, std::unique_ptr<GraphExchange>* out) {
  std::unique_ptr<GraphExchange> x;
  MpiStatus s = make(shared, algorithm, std::move(schedule), Kind::kNonblocking, lane, progress_anywhere, &x);
  if (!s.ok()) return s;
  x->sizes_ = std::make_unique<SizePass>(*shared, lane, x->schedule_, buffers.send_bytes, buffers.recv_bytes);
  x->unbuilt_ = std::make_unique<GraphBuffers>(buffers);
  x->messaging_phases_ = 2;  // the pass needs progress between its phases (the hook)
  *out = std::move(x);
  return {};
}

MpiStatus GraphExchange::create_delegated(const std::shared_ptr<GraphShared>& shared, ir::graph::GraphAlgorithm algorithm, int lane,
                                          bool progress_anywhere, std::unique_ptr<Delegate> delegate, std::unique_ptr<GraphExchange>* out) {
  std::unique_ptr<GraphExchange> x;
  MpiStatus s = make(shared, algorithm, ir::graph::RankSchedule{}, Kind::kNonblocking, lane, progress_anywhere, &x);
  if (!s.ok()) return s;
  x->delegate_ = std::move(delegate);
  x->messaging_phases_ = 2;  // its phases need progress between them (the hook)
  *out = std::move(x);
  return {};
}

bool GraphExchange::learn_sizes(bool block, bool post_only) {
  if (!sizes_->advance(block, post_only)) return false;
  unbuilt_->temp_bytes = sizes_->temp_bytes();
  const MpiStatus pass = sizes_->error();
  sizes_.reset();
  // A size that differs between the ends of an edge is reported after the whole schedule ran,
  // as on arrival; an MPI error stops here.
  messaging_phases_ = 0;
  const MpiStatus s = !pass.ok() && pass.code != MPI_ERR_TRUNCATE ? pass : build(*unbuilt_);
  unbuilt_.reset();
  note(pass);
  if (!s.ok()) {
    fail(0, 0, s);
    return false;
  }
  return true;
}

// A location of this rank as (address, count, datatype) and its bytes: the caller's block, or
// a temp slot's bytes.
MpiStatus GraphExchange::place(const ir::graph::Loc& loc, const GraphBuffers& b, BlockSpec* out, std::int64_t* bytes) {
  const std::size_t i = static_cast<std::size_t>(loc.index);
  switch (loc.kind) {
    case LocKind::kSend:
      *out = b.send.at(i);
      *bytes = b.send_bytes.at(i);
      return {};
    case LocKind::kRecv:
      *out = b.recv.at(i);
      *bytes = b.recv_bytes.at(i);
      return {};
    case LocKind::kTemp:
      *bytes = static_cast<std::int64_t>(temps_.at(i).size()) - 1;  // one spare byte: never empty
      *out = BlockSpec{temps_.at(i).data(), static_cast<MPI_Count>(*bytes), MPI_BYTE};
      return {};
  }
  return mpi_error(MPI_ERR_INTERN, "unknown location");
}

// One message: its parts placed, then laid out (graph_layout.h).
MpiStatus GraphExchange::message(const ir::graph::Message& m, bool recv, int phase, const GraphBuffers& b, Post* out) {
  out->recv = recv;
  out->peer = m.peer;
  out->phase = phase;
  out->tag = shared_->lanes.tag(lane_, phase);
  out->bytes = 0;
  std::vector<BlockSpec> parts;
  for (const ir::graph::Part& part : m.parts) {
    BlockSpec spec;
    std::int64_t bytes = 0;
    MpiStatus s = place(part.loc, b, &spec, &bytes);
    if (!s.ok()) return s;
    out->bytes += bytes;
    parts.push_back(spec);
  }
  MessageLayout l;
  MpiStatus s = message_layout(parts, &owned_types_, &l);
  out->buf = l.buf;
  out->count = l.count;
  out->type = l.type;
  return s;
}

MpiStatus GraphExchange::build(const GraphBuffers& b) {
  temps_.clear();
  for (std::size_t t = 0; t < schedule_.temps.size(); ++t)
    temps_.emplace_back(static_cast<std::size_t>((b.temp_bytes.empty() ? b.block_bytes : b.temp_bytes.at(t)) + 1));
  std::size_t pack_bytes = 0;
  for (std::size_t f = 0; f < schedule_.phases.size(); ++f) {
    const ir::graph::GraphPhase& ph = schedule_.phases[f];
    phase_begin_.push_back(posts_.size());
    // Receives first: posted before the sends of the same phase, so that a message to this
    // rank's peers finds its receive early where the peer does the same.
    for (bool recv : {true, false}) {
      for (const ir::graph::Message& m : recv ? ph.recvs : ph.sends) {
        Post post;
        MpiStatus s = message(m, recv, static_cast<int>(f), b, &post);
        if (!s.ok()) return s;
        posts_.push_back(post);
      }
    }
    if (!ph.sends.empty() || !ph.recvs.empty()) ++messaging_phases_;
    std::vector<LocalCopy> copies;
    for (const ir::graph::Copy& c : ph.copies) {
      LocalCopy lc;
      std::int64_t from_bytes = 0, to_bytes = 0;
      MpiStatus s = place(c.from, b, &lc.from, &from_bytes);
      if (s.ok()) s = place(c.to, b, &lc.to, &to_bytes);
      if (!s.ok()) return s;
      if (from_bytes != to_bytes)
        return mpi_error(MPI_ERR_TRUNCATE, "block " + ir::graph::to_string(c.block) + " has " + std::to_string(from_bytes) + " bytes in " +
                                               ir::graph::to_string(c.from) + " and " + std::to_string(to_bytes) + " in " +
                                               ir::graph::to_string(c.to) + " (self or parallel edges must carry blocks of one size)");
      // No bytes (an empty datatype, whatever the count: a large-count form may pass more than
      // INT_MAX such elements, which MPI_Pack's int count cannot take): nothing to copy.
      if (from_bytes == 0) continue;
      if (contiguous_type(lc.from.type) && contiguous_type(lc.to.type)) {
        lc.memcpy_bytes = static_cast<std::size_t>(from_bytes);
      } else if (lc.from.count > INT_MAX || lc.to.count > INT_MAX || from_bytes > INT_MAX) {
        return mpi_error(MPI_ERR_COUNT, "a local copy (self or parallel edges) of more than INT_MAX elements or bytes of a "
                                        "non-contiguous datatype is not supported");
      } else {
        int size = 0;
        CARTPLAN_MPI_CALL(MPI_Pack_size(static_cast<int>(lc.from.count), lc.from.type, shared_->exec, &size));
        pack_bytes = std::max(pack_bytes, static_cast<std::size_t>(size));
      }
      copies.push_back(lc);
    }
    copies_.push_back(std::move(copies));
  }
  phase_begin_.push_back(posts_.size());
  requests_.assign(posts_.size(), MPI_REQUEST_NULL);
  statuses_.resize(posts_.size());
  indices_.resize(posts_.size());
  pack_buffer_.resize(std::max<std::size_t>(pack_bytes, 1));
  return {};
}

MpiStatus GraphExchange::run_copies(std::size_t phase) {
  for (const LocalCopy& c : copies_[phase]) {
    if (c.memcpy_bytes > 0 || (c.from.count == 0 && c.to.count == 0)) {
      if (c.memcpy_bytes > 0) std::memcpy(const_cast<void*>(c.to.addr), c.from.addr, c.memcpy_bytes);
      continue;
    }
    int pos = 0, in = 0;
    CARTPLAN_MPI_CALL(MPI_Pack(c.from.addr, static_cast<int>(c.from.count), c.from.type, pack_buffer_.data(),
                               static_cast<int>(pack_buffer_.size()), &pos, shared_->exec));
    CARTPLAN_MPI_CALL(MPI_Unpack(pack_buffer_.data(), pos, &in, const_cast<void*>(c.to.addr), static_cast<int>(c.to.count),
                                 c.to.type, shared_->exec));
  }
  return {};
}

void GraphExchange::take_lane(int lane) {
  GraphExchange* previous = nullptr;
  {
    PoolLock lock(shared_->mu);
    previous = shared_->holder(lane);
    shared_->holder(lane) = this;
  }
  // The lane's previous request on this rank finishes its communication first (lanes.h).
  if (previous && previous->pending_) drive(previous);
  lane_ = lane;
  for (Post& p : posts_) p.tag = shared_->lanes.tag(lane, p.phase);
  if (sizes_) sizes_->set_lane(lane);
}

MPI_Comm GraphExchange::error_comm() const { return request_error_comm(shared_.get()); }

GraphExchange::~GraphExchange() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (pending_) drive(this);  // never free requests that are still in use
  give_back_lane(shared_.get(), this, kind_, lane_);
  for (MPI_Datatype& t : owned_types_) MPI_Type_free(&t);
}

void GraphExchange::note(MpiStatus s) {
  if (!s.ok() && error_.ok()) error_ = std::move(s);
}

void GraphExchange::step(bool block, bool post_only) {
  if (delegate_) {  // never blocks: it may have to wait for an earlier request's progress
    MpiStatus result;
    if (!delegate_->step(&result)) return;
    note(std::move(result));
    return set_pending(false);
  }
  if (sizes_ && !learn_sizes(block, post_only)) return;
  const std::size_t phases = phase_begin_.size() - 1;
  while (phase_ < phases) {
    const std::size_t first = phase_begin_[phase_], n = phase_begin_[phase_ + 1] - first;
    if (!phase_started_) {
      for (std::size_t j = first; j < first + n; ++j) {
        const Post& p = posts_[j];
        const int rc = p.recv ? MPI_Irecv(p.buf, p.count, p.type, p.peer, p.tag, shared_->exec, &requests_[j])
                              : MPI_Isend(p.buf, p.count, p.type, p.peer, p.tag, shared_->exec, &requests_[j]);
        if (rc != MPI_SUCCESS) return fail(first, j - first, from_mpi(rc, p.recv ? "MPI_Irecv" : "MPI_Isend"));
      }
      phase_started_ = true;
      left_ = n;
      if (post_only && n > 0) return;
    }
    // A phase's receives may be read by the next phase's sends: finish it before moving on.
    // Each completed request is checked once, when Waitall/Waitsome/Testsome reports it.
    if (block && left_ == n && n > 0) {
      const int rc = wait_whole_phase(first, n);
      if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) return fail(first, n, from_mpi(rc, "MPI_Waitall"));
    }
    while (left_ > 0) {
      int done = 0;
      const int rc = block ? completion::waitsome(static_cast<int>(n), requests_.data() + first, &done, indices_.data(), statuses_.data())
                           : completion::testsome(static_cast<int>(n), requests_.data() + first, &done, indices_.data(), statuses_.data());
      if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) return fail(first, n, from_mpi(rc, block ? "MPI_Waitsome" : "MPI_Testsome"));
      if (done == MPI_UNDEFINED) break;
      for (int k = 0; k < done; ++k) {
        const Post& p = posts_[first + static_cast<std::size_t>(indices_[static_cast<std::size_t>(k)])];
        note(arrival_error(p.recv, p.phase, p.peer, p.bytes, statuses_[static_cast<std::size_t>(k)], rc == MPI_ERR_IN_STATUS));
      }
      left_ -= static_cast<std::size_t>(done);
      if (!block && done == 0) return;
    }
    note(run_copies(phase_));
    ++phase_;
    phase_started_ = false;
  }
  set_pending(false);
}

// A blocking wait for a phase none of whose requests has completed yet: one MPI_Waitall, as the
// Cartesian executor does, instead of one MPI_Waitsome per completion (a library charges every
// call: SMPI its smpi/test poll per call, docs/graphs-results.md "Where the simulated time
// goes"). Each completed request is checked; with MPI_ERR_IN_STATUS those still
// MPI_ERR_PENDING stay active and are left to the Waitsome loop. Returns Waitall's code; left_
// counts what is still pending.
int GraphExchange::wait_whole_phase(std::size_t first, std::size_t n) {
  const int rc = completion::waitall(static_cast<int>(n), requests_.data() + first, statuses_.data());
  if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) return rc;
  for (std::size_t k = 0; k < n; ++k) {
    if (rc == MPI_ERR_IN_STATUS && statuses_[k].MPI_ERROR == MPI_ERR_PENDING) continue;
    const Post& p = posts_[first + k];
    note(arrival_error(p.recv, p.phase, p.peer, p.bytes, statuses_[k], rc == MPI_ERR_IN_STATUS));
    --left_;
  }
  return rc;
}

// When MPI itself fails the schedule cannot go on: receives still pending are cancelled,
// sends released, and the error is reported by wait or test.
void GraphExchange::fail(std::size_t first, std::size_t n, MpiStatus s) {
  for (std::size_t j = first; j < first + n; ++j) abandon_request(&requests_[j], posts_[j].recv);
  phase_started_ = false;
  note(std::move(s));
  set_pending(false);
}

}  // namespace cartplan::mpi
