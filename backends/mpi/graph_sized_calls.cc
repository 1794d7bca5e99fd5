// Blocking v calls that reuse the previous call's sizes: messages as before or with sizes.
#include "backends/mpi/graph_sized_calls.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <climits>
#include <cstring>
#include <string>
#include <utility>

#include "backends/mpi/completion.h"
#include "backends/mpi/exchange.h"
#include "backends/mpi/predefined.h"
#include "backends/mpi/progressing_wait.h"

namespace cartplan::mpi {
namespace {

using ir::graph::LocKind;

std::atomic<std::uint64_t> g_calls{0}, g_as_before{0}, g_with_sizes{0}, g_layouts{0}, g_requests{0};
std::atomic<bool> g_reuse{true};
std::atomic<std::size_t> g_large_bytes{static_cast<std::size_t>(INT_MAX)};
std::atomic<bool> g_unsendable{false};

// A temp block's size in this call before its message came, and after its message came without
// it (its receive failed here or upstream, or its origin could not send it): the block is
// poisoned, forwarded with the header kPoisoned and no bytes, and every receiver reports it.
constexpr std::int64_t kUnknown = -1, kPoisoned = -2;

// Whether MPI_Pack can take the block (int counts); a contiguous block is copied whatever its size.
bool packable(const BlockSpec& s, std::int64_t bytes) { return contiguous_type(s.type) || (s.count <= INT_MAX && bytes <= INT_MAX); }

// The buffers a layout is for, as words; empty when a datatype is not predefined (a derived
// handle may be freed and its value reused for another type between calls).
std::vector<std::uintptr_t> buffers_key(const GraphBuffers& b) {
  std::vector<std::uintptr_t> key;
  for (const auto* side : {&b.send, &b.recv}) {
    for (const BlockSpec& s : *side) {
      if (!predefined_type(s.type)) return {};
      key.insert(key.end(), {reinterpret_cast<std::uintptr_t>(s.addr), static_cast<std::uintptr_t>(s.count),
                             reinterpret_cast<std::uintptr_t>(s.type)});
    }
    key.push_back(0);
  }
  return key;
}

// A block's bytes to or from a packed buffer (homogeneous systems, as every temp slot).
MpiStatus pack_block(const BlockSpec& s, std::int64_t bytes, unsigned char* out, MPI_Comm comm) {
  if (bytes == 0) return {};
  if (contiguous_type(s.type)) {
    std::memcpy(out, s.addr, static_cast<std::size_t>(bytes));
    return {};
  }
  if (s.count > INT_MAX || bytes > INT_MAX) return mpi_error(MPI_ERR_COUNT, "a block of more than INT_MAX elements or bytes sent with sizes");
  int pos = 0;
  CARTPLAN_MPI_CALL(MPI_Pack(s.addr, static_cast<int>(s.count), s.type, out, static_cast<int>(bytes), &pos, comm));
  return {};
}

MpiStatus unpack_block(const unsigned char* in, std::int64_t bytes, const BlockSpec& s, MPI_Comm comm) {
  if (bytes == 0) return {};
  if (contiguous_type(s.type)) {
    std::memcpy(const_cast<void*>(s.addr), in, static_cast<std::size_t>(bytes));
    return {};
  }
  if (s.count > INT_MAX || bytes > INT_MAX) return mpi_error(MPI_ERR_COUNT, "a block of more than INT_MAX elements or bytes received with sizes");
  int pos = 0;
  CARTPLAN_MPI_CALL(MPI_Unpack(in, static_cast<int>(bytes), &pos, const_cast<void*>(s.addr), static_cast<int>(s.count), s.type, comm));
  return {};
}

// Waits for every request of `reqs`, and probes for a message, advancing every other pending
// cartplan request meanwhile (progressing_wait.h): without the progress hook
// (CARTPLAN_PROGRESS=cartplan) a peer may need one of them to reach this call.
int wait_all(std::vector<MPI_Request>* reqs, MPI_Status* statuses) {
  return progressing_waitall(static_cast<int>(reqs->size()), reqs->data(), statuses);
}

// MPI_Iprobe rounds, not a matched probe (SMPI 3.32 has no MPI_Mprobe): only this call receives
// on this tag from this peer, so the receive that follows takes the message probed.
int probe(int peer, int tag, MPI_Comm comm, MPI_Status* status) { return progressing_probe(peer, tag, comm, status); }

// After MPI_ERR_IN_STATUS (a receive failed, typically a truncation) the receives MPI did not
// finish have MPI_ERR_PENDING and are still active: waits for each of them, with its own error
// in its status, before any status is read. Cancelling them instead would leave the peer's
// message of this call to be matched by the next call's receive (every later call one behind).
int finish_pending(std::vector<MPI_Request>* reqs, std::vector<MPI_Status>* statuses) {
  for (std::size_t j = 0; j < reqs->size(); ++j) {
    if ((*statuses)[j].MPI_ERROR != MPI_ERR_PENDING) continue;
    std::vector<MPI_Request> one{(*reqs)[j]};
    MPI_Status st;
    const int rc = wait_all(&one, &st);
    (*reqs)[j] = one[0];
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) return rc;
    if (rc == MPI_SUCCESS) st.MPI_ERROR = MPI_SUCCESS;
    (*statuses)[j] = st;
  }
  return MPI_SUCCESS;
}

// Which side of a message post_bytes posts.
enum class Side { kSend, kRecv };

// `n` bytes in one message (a send or a receive), with a large-count type above INT_MAX bytes;
// the type is freed once posted (MPI keeps it while the request needs it).
int post_bytes(Side side, const void* buf, std::size_t n, int peer, int tag, MPI_Comm comm, MPI_Request* req) {
  auto post = [&](int count, MPI_Datatype type) {
    return side == Side::kRecv ? MPI_Irecv(const_cast<void*>(buf), count, type, peer, tag, comm, req) : MPI_Isend(buf, count, type, peer, tag, comm, req);
  };
  if (n <= g_large_bytes.load()) return post(static_cast<int>(n), MPI_BYTE);
  MPI_Datatype t = MPI_DATATYPE_NULL;
  MpiStatus s = large_count_type(static_cast<MPI_Count>(n), MPI_BYTE, &t);
  if (!s.ok()) return s.code;
  const int rc = post(1, t);
  MPI_Type_free(&t);
  return rc;
}

// One request: waited for (`block`, advancing other requests as a blocking call must) or tested.
int complete_one(MPI_Request* req, bool block, int* done, MPI_Status* st) {
  if (!block) return completion::test(req, done, st);
  std::vector<MPI_Request> one{*req};
  const int rc = wait_all(&one, st);
  *req = one[0];
  *done = 1;
  return rc;
}

}  // namespace

SizedCallStats sized_call_stats() {
  return {g_calls.load(), g_as_before.load(), g_with_sizes.load(), g_layouts.load(), g_requests.load()};
}
void set_size_reuse(bool on) { g_reuse = on; }
bool size_reuse() { return g_reuse.load(); }
void set_unsendable_send_blocks(bool on) { g_unsendable = on; }
void set_large_message_bytes(std::size_t bytes) { g_large_bytes = std::min(bytes, static_cast<std::size_t>(INT_MAX)); }

// One phase on the wire: receives first (one per recv message, on the data tag), then sends
// (one per as-before message; a marker and a packed message per with-sizes message), then the
// with-sizes receive of each marker that came. `state` per recv message: kData (its data-tag
// receive posted), kMarker (a marker came: its with-sizes message is still to be probed),
// kSized (that message's receive posted), kDone.
struct SizedCalls::Wire {
  enum class Stage { kPost, kData, kSized, kSends } stage = Stage::kPost;
  enum : char { kData, kMarker, kSized, kDone };
  std::vector<MPI_Request> recvs, sends, sized;
  std::vector<MPI_Status> statuses;
  std::vector<char> state;
  std::vector<std::vector<unsigned char>> out, in;
};

// The tags of graph_sized_calls.h need fewer than kWithSizesRound - kSizeRound = 70 phases (else
// the with-sizes tags of a late phase would be the size pass's tags on the blocking lane). That
// holds by construction: the schedules come from GraphComm::pattern, whose SetupChannel::construct
// rejects max_iterations > 32 (graph_setup.cc); pairing has two phases per iteration and one
// last phase (final_phase: 2 x iterations), cumulative one per iteration and one last, so at most
// 2 x 32 + 1 = 65 phases.
SizedCalls::SizedCalls(std::shared_ptr<GraphShared> shared, ir::graph::RankSchedule schedule)
    : shared_(std::move(shared)), schedule_(std::move(schedule)), wire_(std::make_unique<Wire>()) {
  assert(schedule_.phases.size() <= static_cast<std::size_t>(kWithSizesRound - kSizeRound));
}

// The layouts of every message for one buffer set (its buffers_key; empty: this call's only),
// with the datatypes they own. Kept in a small pool, so that calls alternating between buffer
// sets (double buffering) build each set's layouts once.
struct SizedCalls::Layouts {
  std::vector<std::uintptr_t> key;
  std::vector<std::vector<MessageLayout>> recv, send;  // per phase and message
  std::vector<std::vector<std::int64_t>> recv_expect;  // bytes of each recv layout
  std::vector<MPI_Datatype> owned;
  ~Layouts() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    for (MPI_Datatype& t : owned)
      if (!finalized) MPI_Type_free(&t);
  }
};

// Layout sets kept per SizedCalls: double buffering needs 2; a few more for codes that rotate.
constexpr std::size_t kLayoutSets = 4;

SizedCalls::~SizedCalls() = default;

void SizedCalls::free_layouts() {
  lay_ = nullptr;
  pool_.clear();
}

void SizedCalls::forget() {
  known_ = false;
  slots_kept_ = false;
}

void SizedCalls::note(MpiStatus s) {
  if (!s.ok() && error_.ok()) error_ = std::move(s);
}

void SizedCalls::place(const ir::graph::Loc& loc, BlockSpec* out, std::int64_t* bytes) const {
  const std::size_t i = static_cast<std::size_t>(loc.index);
  if (loc.kind == LocKind::kTemp) {
    *bytes = static_cast<std::int64_t>(slots_.at(i).size()) - 1;
    *out = BlockSpec{slots_[i].data(), static_cast<MPI_Count>(*bytes), MPI_BYTE};
    return;
  }
  const bool send = loc.kind == LocKind::kSend;
  *out = send ? b_->send.at(i) : b_->recv.at(i);
  *bytes = send ? b_->send_bytes.at(i) : b_->recv_bytes.at(i);
}

std::int64_t SizedCalls::size_now(const ir::graph::Loc& loc) const {
  const std::size_t i = static_cast<std::size_t>(loc.index);
  return loc.kind == LocKind::kSend ? b_->send_bytes.at(i) : loc.kind == LocKind::kRecv ? b_->recv_bytes.at(i) : now_.at(i);
}

MpiStatus SizedCalls::layout(const ir::graph::Message& m, std::vector<MPI_Datatype>* owned, MessageLayout* out, std::int64_t* bytes) {
  std::vector<BlockSpec> parts;
  *bytes = 0;
  for (const ir::graph::Part& p : m.parts) {
    BlockSpec s;
    std::int64_t n = 0;
    place(p.loc, &s, &n);
    *bytes += n;
    parts.push_back(s);
  }
  ++g_layouts;
  return message_layout(parts, owned, out);
}

// This call's layouts: the pool's set for these buffers if there is one, else a new set (the
// least recently used beyond kLayoutSets freed). A set is for the temp slots as they are: when
// the previous call reallocated them or changed their sizes (slots_kept_ false), the slots are
// reallocated for its sizes and the whole pool freed. Nothing here is in use: a SizedCalls runs
// one call at a time (blocking calls complete; a chain runs its calls one after another), and
// this runs in begin(), after the previous call's end(), with all its requests complete.
MpiStatus SizedCalls::lay_out(const GraphBuffers& b) {
  std::vector<std::uintptr_t> key = buffers_key(b);
  lay_ = nullptr;
  pool_.remove_if([](const Layouts& l) { return l.key.empty(); });  // the previous call's only
  if (!slots_kept_) {
    free_layouts();
    slots_.assign(schedule_.temps.size(), {});
    for (std::size_t t = 0; t < slots_.size(); ++t) slots_[t].resize(static_cast<std::size_t>(known_ ? std::max<std::int64_t>(temps_[t], 0) : 0) + 1);
  }
  if (!known_) return {};  // the first call sends and receives everything with sizes
  slots_kept_ = true;
  for (auto it = pool_.begin(); !key.empty() && it != pool_.end(); ++it) {
    if (it->key != key) continue;
    pool_.splice(pool_.begin(), pool_, it);
    lay_ = &pool_.front();
    return {};
  }
  return build(std::move(key));
}

// A new layout set for this call's buffers, first in the pool.
MpiStatus SizedCalls::build(std::vector<std::uintptr_t> key) {
  pool_.emplace_front();
  Layouts& l = pool_.front();
  l.key = std::move(key);
  if (pool_.size() > kLayoutSets) pool_.pop_back();
  l.recv.assign(schedule_.phases.size(), {});
  l.send.assign(schedule_.phases.size(), {});
  l.recv_expect.assign(schedule_.phases.size(), {});
  for (std::size_t f = 0; f < schedule_.phases.size(); ++f) {
    for (bool recv : {true, false}) {
      for (const ir::graph::Message& m : recv ? schedule_.phases[f].recvs : schedule_.phases[f].sends) {
        MessageLayout one;
        std::int64_t bytes = 0;
        MpiStatus s = layout(m, &l.owned, &one, &bytes);
        if (!s.ok()) {
          pool_.pop_front();
          return s;
        }
        (recv ? l.recv : l.send)[f].push_back(one);
        if (recv) l.recv_expect[f].push_back(bytes);
      }
    }
  }
  lay_ = &l;
  return {};
}

// As before exactly when every part has the size it had in the previous call, at both ends of
// the edge: the origin's own blocks by its own comparison, a temp or recv block it forwards
// because it arrived as before (or with sizes equal to the previous ones) in this call. The
// receiver's layout was built for those sizes, so it fits. An empty message always goes with
// sizes: its 0 bytes on the data tag would read as a marker.
bool SizedCalls::as_before(const ir::graph::Message& m) const {
  if (!known_) return false;
  std::int64_t total = 0;
  for (const ir::graph::Part& p : m.parts) {
    const std::size_t i = static_cast<std::size_t>(p.loc.index);
    const std::int64_t now = size_now(p.loc);
    const std::int64_t before = p.loc.kind == LocKind::kSend ? send_[i] : p.loc.kind == LocKind::kRecv ? recv_[i] : temps_[i];
    if (now < 0 || now != before) return false;
    total += now;
  }
  return total > 0;
}

// The parts' 64-bit sizes, then their bytes. A part that cannot go (poisoned here, or a
// non-contiguous block MPI_Pack cannot take) has the size kPoisoned and no bytes: the message
// still goes, and its receiver reports the block instead of waiting for it.
void SizedCalls::pack(const ir::graph::Message& m, std::vector<unsigned char>* out) {
  std::vector<std::int64_t> sizes;
  const std::size_t head = m.parts.size() * sizeof(std::int64_t);
  out->assign(head, 0);
  for (const ir::graph::Part& p : m.parts) {
    BlockSpec s;
    std::int64_t bytes = 0;
    if (size_now(p.loc) >= 0) place(p.loc, &s, &bytes);
    const std::size_t at = out->size();
    MpiStatus st;
    if (size_now(p.loc) < 0) {
      st = mpi_error(MPI_ERR_TRUNCATE, "");  // poisoned upstream: its receiver reported it
    } else if (!packable(s, bytes) || (p.loc.kind == LocKind::kSend && g_unsendable.load())) {
      st = mpi_error(MPI_ERR_COUNT, "block " + ir::graph::to_string(p.block) + " (" + std::to_string(bytes) +
                                        " bytes of a non-contiguous type) is too large for MPI_Pack; it was not sent");
    } else {
      out->resize(at + static_cast<std::size_t>(bytes));
      st = pack_block(s, bytes, out->data() + at, shared_->exec);
    }
    sizes.push_back(st.ok() ? bytes : kPoisoned);
    if (st.ok()) continue;
    out->resize(at);
    if (!st.message.empty()) {  // this rank's own failure (a send or recv block: temp slots are bytes)
      note(st);
      unsent_.push_back(p.loc);
    }
  }
  std::memcpy(out->data(), sizes.data(), head);
}

void SizedCalls::resize_slot(std::size_t t, std::int64_t bytes) {
  now_[t] = bytes;
  if (static_cast<std::int64_t>(slots_[t].size()) == bytes + 1) return;
  slots_[t].resize(static_cast<std::size_t>(bytes) + 1);
  resized_[t] = 1;
}

// Tags: the data tag carries exactly one message per schedule message and call (the data, or
// the marker), so on it, as on today's blocking lane, MPI's non-overtaking order matches every
// receive of call n with the sender's message of call n even if the sender is already in call
// n+1. The with-sizes tag carries a message only when the data tag carried a marker, and the
// receiver takes it only after seeing that marker, in message order: its head is then this
// call's message. (A receive posted on the data tag and cancelled when a with-sizes message
// came, as the design first said, could instead match a later call's data from a sender that
// runs ahead.)
MpiStatus SizedCalls::post(std::size_t f, Wire* w) {
  const ir::graph::GraphPhase& ph = schedule_.phases[f];
  const int tag = shared_->lanes.tag(lane_, static_cast<int>(f));
  const int sized_tag = shared_->lanes.tag(lane_, kWithSizesRound + static_cast<int>(f));
  w->recvs.assign(ph.recvs.size(), MPI_REQUEST_NULL);
  w->sized.assign(ph.recvs.size(), MPI_REQUEST_NULL);
  w->state.assign(ph.recvs.size(), Wire::kData);
  w->in.assign(ph.recvs.size(), {});
  w->statuses.resize(ph.recvs.size());
  for (std::size_t m = 0; m < ph.recvs.size(); ++m) {
    // Before any previous call a marker comes. A temp slot is written by one message or copy
    // per call (verify), so the layout built for the previous sizes still fits here.
    const MessageLayout l = known_ ? lay_->recv[f][m] : MessageLayout{nullptr, 0, MPI_BYTE};
    CARTPLAN_MPI_CALL(MPI_Irecv(l.buf, l.count, l.type, ph.recvs[m].peer, tag, shared_->exec, &w->recvs[m]));
  }
  w->out.assign(ph.sends.size(), {});
  for (std::size_t m = 0; m < ph.sends.size(); ++m) {
    const int peer = ph.sends[m].peer;
    w->sends.emplace_back(MPI_REQUEST_NULL);
    if (as_before(ph.sends[m])) {
      const MessageLayout& l = lay_->send[f][m];
      ++g_as_before;
      CARTPLAN_MPI_CALL(MPI_Isend(l.buf, l.count, l.type, peer, tag, shared_->exec, &w->sends.back()));
      continue;
    }
    pack(ph.sends[m], &w->out[m]);
    ++g_with_sizes;
    CARTPLAN_MPI_CALL(MPI_Isend(nullptr, 0, MPI_BYTE, peer, tag, shared_->exec, &w->sends.back()));  // the marker
    w->sends.emplace_back(MPI_REQUEST_NULL);
    CARTPLAN_MPI_CALL(post_bytes(Side::kSend, w->out[m].data(), w->out[m].size(), peer, sized_tag, shared_->exec, &w->sends.back()));
  }
  return {};
}

// A message that came with sizes: temp slots take their sizes, recv blocks are checked against
// this rank's own counts (a mismatch is MPI_ERR_TRUNCATE naming the block, and that part is
// skipped), then the parts are unpacked. A poisoned part poisons its temp slot, or is reported
// for a recv block.
void SizedCalls::unpack(std::size_t f, const ir::graph::Message& m, const std::vector<unsigned char>& in) {
  const std::string where = "phase " + std::to_string(f) + ": the message from rank " + std::to_string(m.peer);
  const std::size_t head = m.parts.size() * sizeof(std::int64_t);
  std::vector<std::int64_t> sizes(m.parts.size());
  std::int64_t total = 0;
  if (in.size() >= head) std::memcpy(sizes.data(), in.data(), head);
  bool valid = in.size() >= head;
  for (std::int64_t s : sizes) {
    valid = valid && (s >= 0 || s == kPoisoned);
    total += std::max<std::int64_t>(s, 0);
  }
  if (!valid || static_cast<std::int64_t>(in.size() - head) != total) {
    poison(m);
    return note(mpi_error(MPI_ERR_TRUNCATE, where + " does not hold the sizes of its " + std::to_string(m.parts.size()) + " parts"));
  }
  std::size_t at = head;
  for (std::size_t k = 0; k < m.parts.size(); ++k) {
    const ir::graph::Part& p = m.parts[k];
    const std::size_t i = static_cast<std::size_t>(p.loc.index);
    if (sizes[k] == kPoisoned) {
      if (p.loc.kind == LocKind::kTemp) now_[i] = kPoisoned;
      else
        note(mpi_error(MPI_ERR_TRUNCATE, "recv block " + std::to_string(i) + " (block " + ir::graph::to_string(p.block) +
                                             ") did not arrive: it was lost on its way to rank " + std::to_string(m.peer) +
                                             " (an error reported there or before)"));
      continue;
    }
    if (p.loc.kind == LocKind::kTemp) resize_slot(i, sizes[k]);
    BlockSpec s;
    std::int64_t bytes = 0;
    place(p.loc, &s, &bytes);
    if (bytes != sizes[k]) {
      note(mpi_error(MPI_ERR_TRUNCATE, "recv block " + std::to_string(i) + " (from rank " + std::to_string(m.peer) + ") has " +
                                           std::to_string(bytes) + " bytes, its block " + ir::graph::to_string(p.block) + " has " +
                                           std::to_string(sizes[k]) + "; counts must match on both ends of an edge"));
    } else if (!packable(s, bytes)) {
      note(mpi_error(MPI_ERR_COUNT, "recv block " + std::to_string(i) + " (" + std::to_string(bytes) +
                                        " bytes of a non-contiguous type) is too large for MPI_Unpack"));
    } else {
      note(unpack_block(in.data() + at, bytes, s, shared_->exec));
    }
    at += static_cast<std::size_t>(sizes[k]);
  }
}

void SizedCalls::arrived_as_before(const ir::graph::Message& m) {
  for (const ir::graph::Part& p : m.parts) {
    const std::size_t i = static_cast<std::size_t>(p.loc.index);
    if (p.loc.kind == LocKind::kTemp) now_[i] = temps_[i] < 0 ? kPoisoned : temps_[i];  // unknown: its sender never sends it as before
  }
}

// A message whose data did not arrive whole: its temp blocks are forwarded poisoned.
void SizedCalls::poison(const ir::graph::Message& m) {
  for (const ir::graph::Part& p : m.parts)
    if (p.loc.kind == LocKind::kTemp) now_[static_cast<std::size_t>(p.loc.index)] = kPoisoned;
}

// A data-tag receive that completed: as before (or not what this rank expects: the error names
// it, and its temp blocks are poisoned), or a marker, whose with-sizes message follows.
void SizedCalls::arrived(std::size_t f, std::size_t m, const MPI_Status& st, bool failed, Wire* w) {
  const ir::graph::Message& msg = schedule_.phases[f].recvs[m];
  if (!failed && received_bytes(st) == 0) {
    w->state[m] = Wire::kMarker;
    return;
  }
  const std::int64_t expect = known_ ? lay_->recv_expect[f][m] : 0;
  MpiStatus e = arrival_error(true, static_cast<int>(f), msg.peer, expect, st, failed);
  if (e.ok()) arrived_as_before(msg);
  else poison(msg);
  note(std::move(e));
  w->state[m] = Wire::kDone;
}

// The phase's data-tag receives (their senders posted them at the start of the phase, as in
// GraphExchange): true once all completed. A receive that failed (truncated: the sender's sizes
// are not what this rank laid out) is reported and its temp blocks poisoned; only a failure of
// MPI itself stops the schedule. Blocking, after MPI_ERR_IN_STATUS the receives still pending
// are waited for (finish_pending); tested one by one, each completes on its own.
bool SizedCalls::data(std::size_t f, Wire* w, bool block) {
  const std::size_t n = w->recvs.size();
  if (block) {
    const int rc = wait_all(&w->recvs, w->statuses.data());
    const int again = rc == MPI_ERR_IN_STATUS ? finish_pending(&w->recvs, &w->statuses) : MPI_SUCCESS;
    if ((rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) || again != MPI_SUCCESS) {
      stop(from_mpi(rc != MPI_ERR_IN_STATUS ? rc : again, "MPI_Testall"));
      return true;
    }
    for (std::size_t m = 0; m < n; ++m)
      arrived(f, m, w->statuses[m], rc == MPI_ERR_IN_STATUS && w->statuses[m].MPI_ERROR != MPI_SUCCESS, w);
    return true;
  }
  bool all = true;
  for (std::size_t m = 0; m < n; ++m) {
    if (w->state[m] != Wire::kData) continue;
    int done = 0;
    MPI_Status st;
    const int rc = completion::test(&w->recvs[m], &done, &st);
    if (rc != MPI_SUCCESS) st.MPI_ERROR = rc;
    if (done || rc != MPI_SUCCESS) arrived(f, m, st, rc != MPI_SUCCESS, w);
    else all = false;
  }
  return all;
}

// Each marker's with-sizes message: probed (MPI_Iprobe, not a matched probe: SMPI 3.32 has no
// MPI_Mprobe; only this call receives on this tag from this peer, so the receive that follows
// takes the message probed), received, unpacked. The with-sizes tag carries a message only
// after a marker on the data tag, so its head is this call's. True once all are in.
// Two messages of a phase from one peer would come on that tag in schedule order: once one's
// with-sizes message is not there yet, a later one from that peer is not probed in this pass
// (it would match the earlier one's message). No planner makes such phases today; this keeps
// the probe right if one does.
bool SizedCalls::sized(std::size_t f, Wire* w, bool block) {
  const ir::graph::GraphPhase& ph = schedule_.phases[f];
  const int sized_tag = shared_->lanes.tag(lane_, kWithSizesRound + static_cast<int>(f));
  bool all = true;
  std::vector<int> waiting;  // peers whose earlier with-sizes message is not there yet
  for (std::size_t m = 0; m < ph.recvs.size() && stop_.ok(); ++m) {
    const int peer = ph.recvs[m].peer;
    int rc = MPI_SUCCESS, found = 1;
    MPI_Status probed;
    if (w->state[m] == Wire::kMarker && std::find(waiting.begin(), waiting.end(), peer) == waiting.end()) {
      rc = block ? probe(peer, sized_tag, shared_->exec, &probed) : MPI_Iprobe(peer, sized_tag, shared_->exec, &found, &probed);
      if (rc == MPI_SUCCESS && !found) waiting.push_back(peer);
      if (rc == MPI_SUCCESS && found) {
        w->in[m].resize(static_cast<std::size_t>(received_bytes(probed)));
        rc = post_bytes(Side::kRecv, w->in[m].data(), w->in[m].size(), peer, sized_tag, shared_->exec, &w->sized[m]);
        w->state[m] = Wire::kSized;
      }
    }
    if (rc == MPI_SUCCESS && w->state[m] == Wire::kSized) {
      rc = complete_one(&w->sized[m], block, &found, MPI_STATUS_IGNORE);
      if (rc == MPI_SUCCESS && found) {
        unpack(f, ph.recvs[m], w->in[m]);
        w->state[m] = Wire::kDone;
      }
    }
    if (rc != MPI_SUCCESS) stop(from_mpi(rc, "the message with sizes"));
    all = all && w->state[m] == Wire::kDone;
  }
  return all || !stop_.ok();
}

// The phase's sends, even after an MPI error (their peers post every receive of the phase):
// w->out, which they read, lives until then.
bool SizedCalls::sends_done(Wire* w, bool block) {
  int done = 1;
  const int n = static_cast<int>(w->sends.size());
  const int rc = block ? wait_all(&w->sends, MPI_STATUSES_IGNORE) : completion::testall(n, w->sends.data(), &done, MPI_STATUSES_IGNORE);
  if (rc != MPI_SUCCESS) {
    stop(from_mpi(rc, "MPI_Testall"));
    return true;
  }
  return done != 0;
}

void SizedCalls::stop(MpiStatus s) {
  if (stop_.ok()) stop_ = std::move(s);
}

// The phase's copies (self and parallel edges), with this call's sizes.
void SizedCalls::run_copies(std::size_t f) {
  for (const ir::graph::Copy& c : schedule_.phases[f].copies) {
    if (size_now(c.from) < 0) {  // a poisoned temp block stays poisoned
      if (c.to.kind == LocKind::kTemp) now_[static_cast<std::size_t>(c.to.index)] = kPoisoned;
      else note(mpi_error(MPI_ERR_TRUNCATE, "block " + ir::graph::to_string(c.block) + " did not arrive (an error reported on its way)"));
      continue;
    }
    if (c.to.kind == LocKind::kTemp) resize_slot(static_cast<std::size_t>(c.to.index), size_now(c.from));
    BlockSpec from, to;
    std::int64_t from_bytes = 0, to_bytes = 0;
    place(c.from, &from, &from_bytes);
    place(c.to, &to, &to_bytes);
    if (from_bytes != to_bytes) {
      note(mpi_error(MPI_ERR_TRUNCATE, "block " + ir::graph::to_string(c.block) + " has " + std::to_string(from_bytes) + " bytes in " +
                                           ir::graph::to_string(c.from) + " and " + std::to_string(to_bytes) + " in " +
                                           ir::graph::to_string(c.to) + " (self or parallel edges must carry blocks of one size)"));
      continue;
    }
    if (contiguous_type(from.type) && contiguous_type(to.type)) {
      if (from_bytes > 0) std::memcpy(const_cast<void*>(to.addr), from.addr, static_cast<std::size_t>(from_bytes));
      continue;
    }
    std::vector<unsigned char> bytes(static_cast<std::size_t>(from_bytes));
    MpiStatus s = pack_block(from, from_bytes, bytes.data(), shared_->exec);
    note(s.ok() ? unpack_block(bytes.data(), to_bytes, to, shared_->exec) : s);
  }
}

MpiStatus SizedCalls::run(const GraphBuffers& b) {
  begin(b, Lanes::blocking_lane());
  advance(true);
  return end();
}

void SizedCalls::begin(const GraphBuffers& b, int lane) {
  assert(b_ == nullptr);  // one call at a time (lay_out frees layout sets)
  ++g_calls;
  if (lane != Lanes::blocking_lane()) ++g_requests;
  b_ = &b;
  lane_ = lane;
  error_ = {};
  stop_ = {};
  now_.assign(schedule_.temps.size(), kUnknown);
  unsent_.clear();
  resized_.assign(schedule_.temps.size(), 0);
  phase_ = 0;
  *wire_ = Wire{};
  if (static_cast<std::int64_t>(kWithSizesRound + schedule_.phases.size()) > shared_->lanes.max_rounds())
    stop(mpi_error(MPI_ERR_TAG, "the schedule's messages with sizes do not fit in this communicator's tag space"));
  else
    stop(lay_out(b));
  if (!stop_.ok()) phase_ = schedule_.phases.size();
}

// Phase by phase: post, the data-tag receives, the with-sizes receives, the sends, then the
// copies. Stopped by an MPI error, the phase still completes its sends; what is left of its
// receives is cancelled.
bool SizedCalls::advance(bool block) {
  using Stage = Wire::Stage;
  while (phase_ < schedule_.phases.size()) {
    Wire& w = *wire_;
    if (w.stage == Stage::kPost) {
      stop(post(phase_, &w));
      w.stage = Stage::kData;
    }
    if (w.stage == Stage::kData && stop_.ok() && !data(phase_, &w, block)) return false;
    if (w.stage == Stage::kData) w.stage = Stage::kSized;
    if (w.stage == Stage::kSized && stop_.ok() && !sized(phase_, &w, block)) return false;
    w.stage = Stage::kSends;
    if (!sends_done(&w, block)) return false;
    for (MPI_Request& r : w.recvs) abandon_request(&r, true);  // only after an MPI error
    for (MPI_Request& r : w.sized) abandon_request(&r, true);
    for (MPI_Request& r : w.sends) abandon_request(&r, false);  // only if MPI failed to complete them
    if (!stop_.ok()) break;
    run_copies(phase_);
    ++phase_;
    w = Wire{};
  }
  return true;
}

MpiStatus SizedCalls::end() {
  const GraphBuffers& b = *b_;
  b_ = nullptr;
  if (!stop_.ok()) {  // an MPI error: the schedule stopped there, so start afresh next call
    forget();
    return stop_;
  }
  // A poisoned temp block was lost on its way in an as-before message (a truncation: its origin's
  // block kept its size, so the previous size stays right here) or after a rank that could not
  // send it, which sends it with sizes next call (unsent_ below). Without a previous size it
  // stays kUnknown: never as before from here, and its sender, which lost it too in the same
  // call (the first, or after the same error), sends it with sizes.
  for (std::size_t t = 0; t < now_.size(); ++t) {
    if (now_[t] < 0) now_[t] = known_ ? temps_[t] : kUnknown;
    if (!known_ || now_[t] != temps_[t] || resized_[t]) slots_kept_ = false;
  }
  known_ = true;
  send_ = b.send_bytes;
  recv_ = b.recv_bytes;
  temps_ = now_;
  for (const ir::graph::Loc& loc : unsent_)  // never as before: its receivers did not learn its size
    if (loc.kind != LocKind::kTemp) (loc.kind == LocKind::kSend ? send_ : recv_)[static_cast<std::size_t>(loc.index)] = kUnknown;
  return error_;
}

}  // namespace cartplan::mpi
