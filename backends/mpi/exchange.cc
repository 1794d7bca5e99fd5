// The MPI executor: an exchange's program run phase by phase with point-to-point messages and
// local copies, its completion and errors. (Creation: exchange_create.cc; settle, measure and
// reuse: exchange_settle.h, exchange_measure.h, exchange_reuse.h; building: exchange_build.cc;
// progress: exchange_progress.cc.)
#include "backends/mpi/exchange.h"

#include <algorithm>
#include <cassert>
#include <climits>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <string>

#include "backends/mpi/completion.h"
#include "engine/lower.h"

namespace cartplan::mpi {
namespace {

// Message combining moves many tiny blocks (one int per neighbour at m = 1): copies of 4 or 8
// bytes are inlined instead of calling memcpy for each.
inline void move_bytes(const void* from, void* to, std::size_t bytes) {
  switch (bytes) {
    case 4: std::memcpy(to, from, 4); break;
    case 8: std::memcpy(to, from, 8); break;
    case 16: std::memcpy(to, from, 16); break;
    default: std::memcpy(to, from, bytes);
  }
}

// A datatype for `count` elements of `type` when count does not fit in an int: chunks of 2^30
// elements, plus the remainder. MPI-3 point-to-point calls take int counts.
MpiStatus large_type(MPI_Count count, MPI_Datatype type, MPI_Datatype* out) {
  constexpr MPI_Count kChunk = MPI_Count{1} << 30;
  const MPI_Count q = count / kChunk, r = count % kChunk;
  if (q > INT_MAX) return mpi_error(MPI_ERR_COUNT, "a message of " + std::to_string(count) + " elements is too large");
  MPI_Datatype chunk = MPI_DATATYPE_NULL, body = MPI_DATATYPE_NULL;
  CARTPLAN_MPI_CALL(MPI_Type_contiguous(static_cast<int>(kChunk), type, &chunk));
  CARTPLAN_MPI_CALL(MPI_Type_contiguous(static_cast<int>(q), chunk, &body));
  MPI_Type_free(&chunk);
  if (r == 0) {
    *out = body;
  } else {
    MPI_Aint lb = 0, extent = 0;
    CARTPLAN_MPI_CALL(MPI_Type_get_extent(type, &lb, &extent));
    MPI_Datatype rest = MPI_DATATYPE_NULL;
    CARTPLAN_MPI_CALL(MPI_Type_contiguous(static_cast<int>(r), type, &rest));
    int lens[2] = {1, 1};
    MPI_Aint displs[2] = {0, static_cast<MPI_Aint>(q * kChunk) * extent};
    MPI_Datatype types[2] = {body, rest};
    CARTPLAN_MPI_CALL(MPI_Type_create_struct(2, lens, displs, types, out));
    MPI_Type_free(&body);
    MPI_Type_free(&rest);
  }
  CARTPLAN_MPI_CALL(MPI_Type_commit(out));
  return {};
}

}  // namespace


MpiStatus large_count_type(MPI_Count count, MPI_Datatype type, MPI_Datatype* out) { return large_type(count, type, out); }

MPI_Comm Exchange::error_comm() const { return request_error_comm(shared_.get()); }

Exchange::~Exchange() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (pending_) drive(this);  // never free requests that are still in use
  give_back_lane(shared_.get(), this, kind_, lane_);
  for (MPI_Request& r : requests_)
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
  for (MPI_Datatype& t : owned_types_) MPI_Type_free(&t);
}

void Exchange::step(bool block, bool post_only) {
  const std::size_t phases = phase_begin_.size() - 1;
  while (phase_ < phases) {
    const std::size_t first = phase_begin_[phase_], n = phase_begin_[phase_ + 1] - first;
    if (!phase_started_) {
      // Packing and rounds to this rank itself: no message of the phase touches their places.
      if (!before_[phase_].empty()) {
        MpiStatus s = run_actions(before_[phase_]);
        if (!s.ok()) return fail(first, 0, s);
      }
      if (n == 0) {  // no messages in this phase
        if (!after_[phase_].empty()) note(run_actions(after_[phase_]));
        ++phase_;
        continue;
      }
      if (!post_phase(first, n)) return;
      if (post_only) return;
    }
    // A phase's receives may be read by the next phase's sends: finish it before moving on.
    if (!recovering_) {
      if (!block && surely_incomplete(static_cast<int>(n), requests_.data() + first)) return;
      int complete = 1;
      const int rc = block ? completion::waitall(static_cast<int>(n), requests_.data() + first, statuses_.data())
                           : completion::testall(static_cast<int>(n), requests_.data() + first, &complete, statuses_.data());
      if (!completed(first, n, rc, complete, block)) return;
    }
    if (recovering_ && !recover(first, n, block)) return;
    if (!after_[phase_].empty()) note(run_actions(after_[phase_]));
    ++phase_;
    phase_started_ = false;
  }
  if (!final_.empty()) note(run_actions(final_));
  set_pending(false);
}

// Plain MPI_Irecv/MPI_Isend with the arguments fixed at build time, not persistent requests:
// Open MPI 4.1 (ob1) starts persistent requests slower than it posts new ones for small
// messages (docs/architecture.md).
inline bool Exchange::post_phase(std::size_t first, std::size_t n) {
  for (std::size_t j = first; j < first + n; ++j) {
    const Post& post = posts_[j];
    const int rc = post.recv ? MPI_Irecv(const_cast<void*>(post.buf), post.count, post.type, post.peer, post.tag, comm_, &requests_[j])
                             : MPI_Isend(post.buf, post.count, post.type, post.peer, post.tag, comm_, &requests_[j]);
    if (rc != MPI_SUCCESS) {
      post_failed(first, j - first, rc, post.recv);
      return false;
    }
  }
  phase_started_ = true;
  recovering_ = false;
  return true;
}

// The failures out of line (their statuses and messages stay out of the hot functions' frames).
__attribute__((noinline)) void Exchange::post_failed(std::size_t first, std::size_t posted, int rc, bool recv) {
  fail(first, posted, from_mpi(rc, recv ? "MPI_Irecv" : "MPI_Isend"));
}

__attribute__((noinline)) void Exchange::note_arrival(std::size_t j, const MPI_Status& st) { note(check_arrival(j, st, false)); }

inline bool Exchange::completed(std::size_t first, std::size_t n, int rc, int complete, bool block) {
  if (rc != MPI_SUCCESS) return completion_failed(first, n, rc, block);
  if (!complete) return false;
  if (!sizes_agreed_)
    for (std::size_t j = 0; j < n; ++j)
      if (!arrived_whole(first + j, statuses_[j])) note_arrival(first + j, statuses_[j]);
  return true;
}

__attribute__((noinline)) bool Exchange::completion_failed(std::size_t first, std::size_t n, int rc, bool block) {
  if (rc != MPI_ERR_IN_STATUS) {
    fail(first, n, from_mpi(rc, block ? "MPI_Waitall" : "MPI_Testall"));
    return false;
  }
  // Some request failed (a truncated message): note it and finish the phase request by request
  // (recover).
  recovering_ = true;
  arrived_.assign(n, 0);
  for (std::size_t j = 0; j < n; ++j)
    if (statuses_[j].MPI_ERROR != MPI_ERR_PENDING) {
      arrived_[j] = 1;
      note(check_arrival(first + j, statuses_[j], true));
    }
  return true;
}

// A rank that saw a bad message still runs the whole schedule, receiving and sending
// everything, with the error noted: its peers then never wait for it, and no message of this
// exchange is left to be matched by the next one on the same lane.
bool Exchange::recover(std::size_t first, std::size_t n, bool block) {
  while (std::count(arrived_.begin(), arrived_.end(), 1) < static_cast<std::ptrdiff_t>(n)) {
    int out = 0;
    const int rc = block ? completion::waitsome(static_cast<int>(n), requests_.data() + first, &out, indices_.data(), statuses_.data())
                         : completion::testsome(static_cast<int>(n), requests_.data() + first, &out, indices_.data(), statuses_.data());
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) {
      fail(first, n, from_mpi(rc, "MPI_Waitsome"));
      return false;
    }
    if (out == MPI_UNDEFINED) break;
    for (int k = 0; k < out; ++k) {
      arrived_[static_cast<std::size_t>(indices_[k])] = 1;
      note(check_arrival(first + static_cast<std::size_t>(indices_[k]), statuses_[k], rc == MPI_ERR_IN_STATUS));
    }
    if (!block && out == 0) return false;
  }
  recovering_ = false;
  return true;
}

void Exchange::find_one_phase() {
  one_phase_ = phase_begin_.size() == 2 && phase_begin_[1] > 0 && before_[0].empty() && after_[0].empty() && final_.empty();
}

// step(true) of a one-phase schedule (one_phase_), from run_alone: the same posts, completion
// and checks without the loop over phases and their empty lists of local steps. The exchange
// is not in the registry (run_alone), so set_pending(false) at its end would do nothing.
void Exchange::run_one_phase() {
  const std::size_t n = requests_.size();
  if (!post_phase(0, n)) return;
  const int rc = completion::waitall(static_cast<int>(n), requests_.data(), statuses_.data());
  if (!completed(0, n, rc, 1, true)) return;
  if (recovering_ && !recover(0, n, true)) return;
  phase_ = 1;
  phase_started_ = false;
}

__attribute__((noinline)) void Exchange::clear_error() { error_ = {}; }

void Exchange::note(MpiStatus s) {
  if (!s.ok() && error_.ok()) error_ = std::move(s);
}

// The common case of check_arrival, without building a status: a send, or a receive that
// brought exactly what was expected.
inline bool Exchange::arrived_whole(std::size_t j, const MPI_Status& st) const {
  const Post& post = posts_[j];
  if (!post.recv) return true;
#ifdef OPEN_MPI
  // Open MPI's public status holds the bytes received (_ucount, in its mpi.h since 1.7): the
  // expected bytes are the answer without a call. Anything else asks MPI_Get_count below.
  if (st._ucount == post.bytes) return true;
#endif
  int got = 0;
  MPI_Get_count(&st, post.type, &got);
  return got == post.count;
}

// Every receive must bring exactly the bytes expected. A peer whose block has another size is
// found here, on the rank that sees it, without any agreement: a larger message is truncated
// by MPI, a smaller one is counted. `error_valid`: the status's MPI_ERROR field was set (only
// when the completion call returned MPI_ERR_IN_STATUS).
MpiStatus Exchange::check_arrival(std::size_t j, const MPI_Status& st, bool error_valid) {
  const Post& post = posts_[j];
  const int error = error_valid ? st.MPI_ERROR : MPI_SUCCESS;
  if (!post.recv) return error == MPI_SUCCESS ? MpiStatus{} : from_mpi(error, "a send");
  // Sizes agreed by every rank (init, checking mode) cannot mismatch: no count to look at.
  if (sizes_agreed_ && error == MPI_SUCCESS) return {};
  if (error == MPI_ERR_TRUNCATE || error == MPI_SUCCESS) {
    int got = 0;
    MPI_Get_count(&st, post.type, &got);
    if (error == MPI_SUCCESS && got == post.count) return {};
  }
  const std::string where = "phase " + std::to_string(post.phase) + " round " + std::to_string(post.round) +
                            ": the message from rank " + std::to_string(post.peer);
  if (error == MPI_ERR_TRUNCATE)
    return mpi_error(MPI_ERR_TRUNCATE, where + " is larger than expected; blocks must have the same size (type signature) on every rank");
  if (error != MPI_SUCCESS) return from_mpi(error, where.c_str());
  return mpi_error(MPI_ERR_TRUNCATE, where + " is smaller than expected; blocks must have the same size (type signature) on every rank");
}

// When MPI itself fails (a post or completion call), the schedule cannot go on. The phase
// leaves no MPI request behind: receives still pending are cancelled, sends still pending are
// released to complete on their own, so the exchange can be started again or freed. The
// error is reported by wait or test.
void abandon_request(MPI_Request* request, bool recv) {
  if (*request == MPI_REQUEST_NULL) return;
  int flag = 0;
  completion::test(request, &flag, MPI_STATUS_IGNORE);
  if (flag) return;
  if (recv) {
    MPI_Cancel(request);
    completion::wait(request, MPI_STATUS_IGNORE);
  } else {
    MPI_Request_free(request);
  }
}

void Exchange::fail(std::size_t first, std::size_t n, MpiStatus s) {
  for (std::size_t j = first; j < first + n; ++j) abandon_request(&requests_[j], posts_[j].recv);
  phase_started_ = false;
  recovering_ = false;
  note(std::move(s));
  set_pending(false);
}

MpiStatus Exchange::run_actions(const std::vector<Action>& actions) {
  for (const Action& a : actions) {
    const LocalCopy& c = a.copy;
    switch (a.kind) {
      case Action::Kind::kMove:
        move_bytes(c.from.addr, const_cast<void*>(c.to.addr), c.memcpy_bytes);
        break;
      case Action::Kind::kTyped: {
        MpiStatus s = run_typed(c);
        if (!s.ok()) return s;
        break;
      }
      case Action::Kind::kCombine: {
        if (a.fast) {
          a.fast(c.from.addr, const_cast<void*>(c.to.addr), static_cast<std::size_t>(c.from.count));
          break;
        }
        const char* in = static_cast<const char*>(c.from.addr);
        char* inout = static_cast<char*>(const_cast<void*>(c.to.addr));
        for (MPI_Count left = c.from.count; left > 0;) {
          const int n = static_cast<int>(std::min<MPI_Count>(left, INT_MAX));
          const int rc = MPI_Reduce_local(in, inout, n, c.from.type, op_);
          if (rc != MPI_SUCCESS) return from_mpi(rc, "MPI_Reduce_local");
          in += static_cast<MPI_Aint>(n) * a.extent;
          inout += static_cast<MPI_Aint>(n) * a.extent;
          left -= n;
        }
        break;
      }
    }
  }
  return {};
}

// A copy between locations of which at least one is not contiguous: MPI_Pack and MPI_Unpack
// through a buffer sized at build time.
MpiStatus Exchange::run_typed(const LocalCopy& c) {
  if (!pack_buffer_.empty() && c.from.count <= INT_MAX && c.to.count <= INT_MAX) {
    int pos = 0;
    if (MPI_Pack(c.from.addr, static_cast<int>(c.from.count), c.from.type, pack_buffer_.data(),
                 static_cast<int>(pack_buffer_.size()), &pos, comm_) == MPI_SUCCESS) {
      int in = 0;
      CARTPLAN_MPI_CALL(MPI_Unpack(pack_buffer_.data(), pos, &in, const_cast<void*>(c.to.addr),
                                   static_cast<int>(c.to.count), c.to.type, comm_));
      return {};
    }
  }
  // Too large for MPI_Pack's int sizes: a message to this rank itself with large types, on
  // the tag just above the lanes' range (a blocking call, so nothing else can match it).
  MPI_Datatype from = c.from.type, to = c.to.type;
  int from_count = static_cast<int>(std::min<MPI_Count>(c.from.count, INT_MAX)), to_count = static_cast<int>(std::min<MPI_Count>(c.to.count, INT_MAX));
  std::vector<MPI_Datatype> temps;
  if (c.from.count > INT_MAX) {
    MpiStatus s = large_type(c.from.count, c.from.type, &from);
    if (!s.ok()) return s;
    temps.push_back(from);
    from_count = 1;
  }
  if (c.to.count > INT_MAX) {
    MpiStatus s = large_type(c.to.count, c.to.type, &to);
    if (!s.ok()) return s;
    temps.push_back(to);
    to_count = 1;
  }
  int me = 0;
  MPI_Comm_rank(comm_, &me);
  const int tag = static_cast<int>(shared_->lanes.max_rounds() * shared_->lanes.count());
  const int rc = MPI_Sendrecv(c.from.addr, from_count, from, me, tag, const_cast<void*>(c.to.addr), to_count, to, me, tag,
                              comm_, MPI_STATUS_IGNORE);
  for (MPI_Datatype& t : temps) MPI_Type_free(&t);
  CARTPLAN_MPI_CALL(rc);
  return {};
}

}  // namespace cartplan::mpi
