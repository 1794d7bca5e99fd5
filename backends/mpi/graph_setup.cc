// The MPI driver of the distributed pattern constructions (seed 003, Alg. 1 and 2; the grid's and its verdict sweep).
//
// Every wait here (probes, receives, sends, the final waits for the sends) is
// progressing_wait.h's: a construction is often a call's first wait for its peers, and it is
// not global (neighbours, friends and partners, or grid lines), so a peer it waits for may
// still need one of this process's pending requests to reach the call. With nothing pending
// they block in MPI as before.
#include "backends/mpi/graph_setup.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <climits>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backends/mpi/another_rank.h"
#include "backends/mpi/completion.h"
#include "backends/mpi/out_of_memory.h"
#include "backends/mpi/progressing_wait.h"
#include "backends/mpi/test_failure.h"
#include "engine/graph/grid_setup.h"
#include "engine/graph/grid_verdict.h"
#include "engine/graph/setup_rank.h"

namespace cartplan::mpi {
namespace {

using engine::graph::GridFlow;
using engine::graph::GridSetupMessage;
using engine::graph::SetupKind;
using engine::graph::SetupMessage;

constexpr int kKinds = 5;
constexpr int kSubs = 34;  // sub-rounds 0..33 (PairingOptions caps them at max_match_rounds <= 32)
constexpr int kPerConstruction = kSubs * kSubs * kKinds;

// A message's set-up tag carries (construction, kind, iteration, sub-round), as docs/graphs.md
// says. It is not an MPI tag: it travels as the first word of the message (the frame, see
// post_one), and every set-up message goes on the one MPI tag of the channel (setup_tag, the
// communicator's MPI_TAG_UB, which no lane reaches: graph_setup.h). Iterations run from -1 (the
// first in-lists) to max_iterations; with the caps checked in construct() one construction needs
// set-up tags below 34 * 34 * 5 = 5780, and the construction's sequence number goes above them.
int tag_of(int seq, const SetupMessage& m) {
  return seq * kPerConstruction + ((m.iteration + 1) * kSubs + m.sub) * kKinds + static_cast<int>(m.kind);
}

int seq_of(int tag) { return tag / kPerConstruction; }

void from_tag(int tag, SetupMessage* m) {
  tag %= kPerConstruction;
  m->kind = static_cast<SetupKind>(tag % kKinds);
  m->sub = tag / kKinds % kSubs;
  m->iteration = tag / kKinds / kSubs - 1;
}

// The integers a message carries: one for a choice or state, two for a note, the list otherwise.
std::vector<int> words_of(const SetupMessage& m) {
  switch (m.kind) {
    case SetupKind::kChoice:
    case SetupKind::kState: return {m.value};
    case SetupKind::kNote: return {m.value, m.value2};
    case SetupKind::kInList:
    case SetupKind::kHandover: return m.payload;
  }
  return {};
}

void set_words(std::vector<int> words, SetupMessage* m) {
  switch (m->kind) {
    case SetupKind::kChoice:
    case SetupKind::kState: m->value = words.empty() ? 0 : words[0]; return;
    case SetupKind::kNote:
      m->value = words.size() > 0 ? words[0] : 0;
      m->value2 = words.size() > 1 ? words[1] : 0;
      return;
    case SetupKind::kInList:
    case SetupKind::kHandover: m->payload = std::move(words); return;
  }
}

// Messages in flight from this rank: each keeps its buffer until its send completes.
struct Outbox {
  std::vector<std::vector<int>> buffers;
  std::vector<MPI_Request> requests;
};

MpiStatus send_words(MPI_Comm comm, int to, int tag, std::vector<int>&& words, Outbox* box) {
  box->buffers.push_back(std::move(words));
  const std::vector<int>& w = box->buffers.back();
  if (w.size() > static_cast<std::size_t>(INT_MAX)) return mpi_error(MPI_ERR_COUNT, "a set-up message is too large");
  box->requests.emplace_back(MPI_REQUEST_NULL);
  CARTPLAN_MPI_CALL(MPI_Isend(w.data(), static_cast<int>(w.size()), MPI_INT, to, tag, comm, &box->requests.back()));
  return {};
}

#ifdef CARTPLAN_SMPI
// SMPI 3.32 has no MPI_Mprobe, and its MPI_Probe polls (an MPI_Iprobe every smpi/iprobe of
// simulated time), which makes a construction over hundreds of ranks take hours of wall time.
// There a frame is [set-up tag, n, up to kInline words], received by a blocking
// MPI_Recv(MPI_ANY_SOURCE) (progressing_recv) into a buffer of fixed size; a longer payload follows as a second
// message from the same rank on the same MPI tag, received from that rank right after its frame
// (MPI's non-overtaking rule: it is that rank's next message there). The frame adds 8 bytes.
constexpr int kInline = 64;

// A one-word message's frame in `frame` (at least 3 ints): its length in ints.
int one_word_frame(int tag, int word, int* frame) {
  frame[0] = tag, frame[1] = 1, frame[2] = word;
  return 3;
}

MpiStatus post_one(MPI_Comm comm, int to, int tag, int frame_tag, std::vector<int> w, Outbox* box) {
  const int n = static_cast<int>(w.size());
  std::vector<int> frame = {tag, n};
  if (n <= kInline) frame.insert(frame.end(), w.begin(), w.end());
  MpiStatus s = send_words(comm, to, frame_tag, std::move(frame), box);
  if (s.ok() && n > kInline) s = send_words(comm, to, frame_tag, std::move(w), box);
  return s;
}

// One message from any rank (`block`), or *found = 0 if none is there; status gets its sender
// and its set-up tag.
MpiStatus take(MPI_Comm comm, int frame_tag, bool block, int* found, std::vector<int>* words, MPI_Status* status) {
  if (!block) {
    CARTPLAN_MPI_CALL(MPI_Iprobe(MPI_ANY_SOURCE, frame_tag, comm, found, status));
    if (!*found) return {};
  }
  std::vector<int> frame(2 + kInline);
  CARTPLAN_MPI_CALL(progressing_recv(frame.data(), 2 + kInline, MPI_INT, block ? MPI_ANY_SOURCE : status->MPI_SOURCE, frame_tag, comm, status));
  const int tag = frame[0], n = frame[1];
  status->MPI_TAG = tag;
  if (n <= kInline) {
    words->assign(frame.begin() + 2, frame.begin() + 2 + n);
  } else {
    words->assign(static_cast<std::size_t>(n), 0);
    MPI_Status payload;
    CARTPLAN_MPI_CALL(progressing_recv(words->data(), n, MPI_INT, status->MPI_SOURCE, frame_tag, comm, &payload));
    int got = 0;
    CARTPLAN_MPI_CALL(MPI_Get_count(&payload, MPI_INT, &got));
    if (got != n)
      return mpi_error(MPI_ERR_INTERN, "a set-up payload from rank " + std::to_string(status->MPI_SOURCE) + " brought " +
                                           std::to_string(got) + " words, its frame announced " + std::to_string(n));
  }
  *found = 1;
  return {};
}
#else
// A frame is [set-up tag, words...], one message, taken by a matched probe on the channel's tag.
int one_word_frame(int tag, int word, int* frame) {
  frame[0] = tag, frame[1] = word;
  return 2;
}

MpiStatus post_one(MPI_Comm comm, int to, int tag, int frame_tag, std::vector<int> w, Outbox* box) {
  w.insert(w.begin(), tag);
  return send_words(comm, to, frame_tag, std::move(w), box);
}

// One message from any rank (`block`), or *found = 0 if none is there; status gets its sender
// and its set-up tag.
MpiStatus take(MPI_Comm comm, int frame_tag, bool block, int* found, std::vector<int>* words, MPI_Status* status) {
  MPI_Message handle = MPI_MESSAGE_NULL;
  if (block) {
    CARTPLAN_MPI_CALL(progressing_mprobe(MPI_ANY_SOURCE, frame_tag, comm, &handle, status));
  } else {
    CARTPLAN_MPI_CALL(MPI_Improbe(MPI_ANY_SOURCE, frame_tag, comm, found, &handle, status));
    if (!*found) return {};
  }
  int n = 0;
  CARTPLAN_MPI_CALL(MPI_Get_count(status, MPI_INT, &n));
  words->assign(static_cast<std::size_t>(n), 0);
  CARTPLAN_MPI_CALL(MPI_Mrecv(words->data(), n, MPI_INT, &handle, MPI_STATUS_IGNORE));
  if (words->empty()) return mpi_error(MPI_ERR_INTERN, "a set-up message without its frame");
  status->MPI_TAG = words->front();
  words->erase(words->begin());
  *found = 1;
  return {};
}
#endif

MpiStatus post(MPI_Comm comm, int seq, int frame_tag, std::vector<SetupMessage>&& messages, Outbox* box, SetupCounts* counts) {
  for (const SetupMessage& m : messages) {
    MpiStatus s = post_one(comm, m.to, tag_of(seq, m), frame_tag, words_of(m), box);
    if (!s.ok()) return s;
    ++counts->sent;
    counts->sent_bytes += m.bytes();
  }
  return {};
}

SetupMessage decode(int rank, SetupChannel::Raw&& raw) {
  SetupMessage m;
  m.from = raw.from;
  m.to = rank;
  from_tag(raw.tag, &m);
  set_words(std::move(raw.words), &m);
  return m;
}

// A grid construction's tag: its sequence number, then the round (below d <= kPerConstruction).
MpiStatus post_grid(MPI_Comm comm, int seq, int frame_tag, std::vector<GridSetupMessage>&& messages, Outbox* box,
                    SetupCounts* counts) {
  for (const GridSetupMessage& m : messages) {
    std::vector<int> w;
    w.reserve(3 * m.flows.size());
    for (const GridFlow& f : m.flows) w.insert(w.end(), {f.origin, f.target, f.edges});
    MpiStatus s = post_one(comm, m.to, seq * kPerConstruction + m.round, frame_tag, std::move(w), box);
    if (!s.ok()) return s;
    ++counts->sent;
    counts->sent_bytes += m.bytes();
  }
  return {};
}

GridSetupMessage grid_decode(int rank, const SetupChannel::Raw& raw) {
  GridSetupMessage m;
  m.from = raw.from;
  m.to = rank;
  m.round = raw.tag % kPerConstruction;
  for (std::size_t i = 0; i + 2 < raw.words.size(); i += 3) m.flows.push_back({raw.words[i], raw.words[i + 1], raw.words[i + 2]});
  return m;
}

// Sends still in flight after a failure of MPI itself: nothing is left waiting for them here.
void abandon(std::vector<MPI_Request>* requests) {
  for (MPI_Request& r : *requests)
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
}

}  // namespace

// Set-up tags are words of the frame, so the sequence numbers may use the whole int range.
SetupChannel::SetupChannel(MPI_Comm comm, std::int64_t tag_ub)
    : comm_(comm), frame_tag_(setup_tag(tag_ub)), slots_(INT_MAX / kPerConstruction) {}

int setup_tag(std::int64_t tag_ub) { return static_cast<int>(std::min<std::int64_t>(tag_ub, INT_MAX)); }

// One message of the running construction, whichever arrives first (`block`), or none if
// nothing is there. A message of a later construction is kept for it.
MpiStatus SetupChannel::receive(bool block, std::vector<Raw>* inbox) {
  for (;;) {
    MPI_Status status;
    int found = 1;
    Raw m;
    MpiStatus s = take(comm_, frame_tag_, block, &found, &m.words, &status);
    if (!s.ok() || !found) return s;
    m.from = status.MPI_SOURCE;
    m.tag = status.MPI_TAG;
    if (seq_of(m.tag) == seq_) {
      inbox->push_back(std::move(m));
      return {};
    }
    early_[seq_of(m.tag)].push_back(std::move(m));
  }
}

// What arrived for the running construction during earlier ones.
std::vector<SetupChannel::Raw> SetupChannel::take_early() {
  std::vector<Raw> out;
  if (auto it = early_.find(seq_); it != early_.end()) {
    out = std::move(it->second);
    early_.erase(it);
  }
  return out;
}

MpiStatus SetupChannel::construct(int rank, const ir::graph::RankEdges& edges, const engine::graph::PairingOptions& options,
                                  engine::graph::RankPattern* out, SetupCounts* counts) {
  if (options.max_iterations > kSubs - 2 || options.max_match_rounds > kSubs - 2)
    return mpi_error(MPI_ERR_INTERN, "the set-up caps exceed the tag encoding");
  engine::graph::RankBuilder builder(rank, edges.out, edges.in, options);
  Outbox box;
  MpiStatus s = post(comm_, seq_, frame_tag_, builder.start(), &box, counts);
  std::vector<Raw> raw = take_early();
  std::vector<SetupMessage> inbox;
  if (s.ok() && !raw.empty()) {
    for (Raw& r : raw) inbox.push_back(decode(rank, std::move(r)));
    counts->received += static_cast<std::int64_t>(inbox.size());
    s = post(comm_, seq_, frame_tag_, builder.step(std::move(inbox)), &box, counts);
  }
  // The builder waits only for messages it knows are coming (setup_rank.h), and a finished rank
  // is never sent another one (engine/graph/setup_run.cc checks that on every graph the tests
  // build), so receiving until done() consumes exactly this rank's messages.
  while (s.ok() && !builder.done()) {
    raw.clear();
    s = receive(true, &raw);
    while (s.ok() && raw.size() < 4096) {  // take what has arrived as well, then step once
      const std::size_t before = raw.size();
      s = receive(false, &raw);
      if (raw.size() == before) break;
    }
    if (!s.ok()) break;
    inbox.clear();
    for (Raw& r : raw) inbox.push_back(decode(rank, std::move(r)));
    counts->received += static_cast<std::int64_t>(inbox.size());
    s = post(comm_, seq_, frame_tag_, builder.step(std::move(inbox)), &box, counts);
  }
  seq_ = (seq_ + 1) % slots_;
  if (!s.ok()) {  // MPI itself failed: nothing is left waiting here
    abandon(&box.requests);
    return s;
  }
  // Every message this rank sent is consumed by a rank that was still running, so these end.
  CARTPLAN_MPI_CALL(progressing_waitall(static_cast<int>(box.requests.size()), box.requests.data(), MPI_STATUSES_IGNORE));
  *out = builder.pattern();
  return {};
}

// A grid round's messages from this rank's line peers in dimension `round`: `want` of them,
// from `held` (kept from earlier) or received. A later round's message waits in `held`.
MpiStatus SetupChannel::take_round(int round, std::size_t want, std::vector<Raw>* held, std::vector<Raw>* mine) {
  MpiStatus s;
  for (std::size_t i = 0; s.ok() && mine->size() < want;) {
    if (i == held->size()) s = receive(true, held);  // appends one message of this construction
    else if ((*held)[i].tag % kPerConstruction != round) ++i;
    else {
      mine->push_back(std::move((*held)[i]));
      held->erase(held->begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  return s;
}

// A rank whose part of the grid construction failed locally (out of memory, or its builder
// refused a round) still makes every round, so that no line peer waits for it: in place of its
// flows, each line peer of the round gets a marker, one word (the error class; a message of flows
// has 3 words per flow). A rank that receives a marker fails too and sends markers from the next
// round on. Every rank thus sends and receives exactly what it would have and no rank waits in
// the construction; but markers only travel forward (a failure after round k reaches only the
// ranks sharing the failed rank's coordinates 0..k), so a failure is known everywhere only where
// an agreement follows (the table's reduction, a persistent init's; docs/graphs-results.md,
// "What is not done") or the verdict sweep runs (agree_grid: blocking and non-blocking calls).
// `first`: line peers already sent this round. Allocates nothing (markers_, `requests`
// reserved), as it runs after running out of memory.
MpiStatus SetupChannel::post_markers(int rank, const std::vector<int>& dims, int round, std::size_t first, int code,
                                     std::vector<MPI_Request>* requests) {
  const std::size_t k = static_cast<std::size_t>(round);
  int stride = 1;  // grid_rank is row-major: dimension k's coordinate steps by the product of the later extents
  for (std::size_t j = k + 1; j < dims.size(); ++j) stride *= dims[j];
  const int mine = rank / stride % dims[k];
  int* frame = markers_[k].data();
  const int n = one_word_frame(seq_ * kPerConstruction + round, code, frame);
  std::size_t peer = 0;
  for (int v = 0; v < dims[k]; ++v) {
    if (v == mine || peer++ < first) continue;
    requests->push_back(MPI_REQUEST_NULL);  // within the capacity reserved before round 0
    CARTPLAN_MPI_CALL(MPI_Isend(frame, n, MPI_INT, rank + (v - mine) * stride, frame_tag_, comm_, &requests->back()));
  }
  return {};
}

// Round by round: a line peer that has finished round k may already send its round k+1
// message (or a later construction's, kept in early_ by receive()), so messages of later rounds
// wait in `held` until their round. Each line peer sends exactly one message per round, a
// marker if its part failed (post_markers).
MpiStatus SetupChannel::construct_grid(int rank, const std::vector<int>& dims, const ir::graph::RankEdges& edges,
                                       engine::graph::GridPattern* out, SetupCounts* counts) {
  if (static_cast<int>(dims.size()) > std::min(kMaxGridRounds, kPerConstruction - 1))
    return mpi_error(MPI_ERR_INTERN, "the grid has too many dimensions for the tag encoding");
  std::optional<engine::graph::GridRankBuilder> builder;
  Outbox box;
  MpiStatus s, failed;  // MPI's own failure; this rank's part's (or a peer's marker)
  std::vector<GridSetupMessage> next;  // this round's messages
  // Everything a failed rank needs for its markers is allocated here, before any send.
  failed = out_of_memory_as_error("constructing the grid pattern", [&] {
    std::size_t peers = 0;
    for (int e : dims) peers += static_cast<std::size_t>(e - 1);
    box.requests.reserve(2 * peers);  // a message may take two sends (the SMPI frame and its payload)
    inject_out_of_memory("grid-construct");  // before round 0
    builder.emplace(rank, dims, edges);
    next = builder->start();
    return MpiStatus{};
  });
  std::vector<Raw> held = take_early();
  for (int round = 0; s.ok() && round < static_cast<int>(dims.size()); ++round) {
    const std::int64_t sent = counts->sent;  // messages (under SMPI a message may take two sends)
    if (failed.ok()) failed = out_of_memory_as_error("constructing the grid pattern", [&] {
      return post_grid(comm_, seq_, frame_tag_, std::move(next), &box, counts);
    });
    if (!failed.ok()) s = post_markers(rank, dims, round, static_cast<std::size_t>(counts->sent - sent), failed.code, &box.requests);
    std::vector<Raw> mine;
    if (s.ok()) s = take_round(round, static_cast<std::size_t>(dims[static_cast<std::size_t>(round)] - 1), &held, &mine);
    if (!s.ok()) break;
    counts->received += static_cast<std::int64_t>(mine.size());
    if (failed.ok()) failed = out_of_memory_as_error("constructing the grid pattern", [&] {
      for (const Raw& m : mine)
        if (m.words.size() % 3 != 0) {  // a marker: its class
          const int cls = m.words.empty() ? MPI_ERR_INTERN : m.words[0];
          return mpi_error(cls, another_rank_failed(cls, "its part of the grid construction"));
        }
      if (round == 0) inject_out_of_memory("grid-construct-partway");  // between rounds
      std::vector<GridSetupMessage> decoded;
      for (const Raw& m : mine) decoded.push_back(grid_decode(rank, m));
      Result<std::vector<GridSetupMessage>> r = builder->step(std::move(decoded));
      if (!r) return mpi_error(MPI_ERR_INTERN, "grid construction, round " + std::to_string(round) + ": " + r.error());
      next = std::move(*r);
      return MpiStatus{};
    });
  }
  seq_ = (seq_ + 1) % slots_;
  if (!s.ok()) {  // MPI itself failed: nothing is left waiting here
    abandon(&box.requests);
    return s;
  }
  // Every line peer receives this rank's message of every round (or its marker), so these end.
  CARTPLAN_MPI_CALL(progressing_waitall(static_cast<int>(box.requests.size()), box.requests.data(), MPI_STATUSES_IGNORE));
  if (!failed.ok()) return failed;
  *out = builder->pattern();
  return {};
}

void SetupChannel::reserve_sweep(const std::vector<int>& dims) {
  std::size_t peers = 0;
  for (int e : dims) peers += static_cast<std::size_t>(e - 1);
  verdict_requests_.reserve(peers);
}

namespace {

// Line peer `from`'s word of the running sweep, if it arrived during an earlier construction
// (`held`, take_early's: each line peer sends one word per sweep): taken out of `held`.
bool take_held(std::vector<SetupChannel::Raw>* held, int from, int round, int* word) {
  for (auto it = held->begin(); it != held->end(); ++it) {
    if (it->from != from) continue;
    assert(it->words.size() == 1 && it->tag % kPerConstruction == round && "a held word of the sweep is one class of its round");
    (void)round;
    *word = it->words.empty() ? 0 : it->words[0];
    held->erase(it);  // moves the later ones down: allocates nothing
    return true;
  }
  return false;
}

}  // namespace

// A word received into a fixed frame (agree_grid's): its class.
MpiStatus SetupChannel::sweep_word(const int* frame, const MPI_Status& status, int round, int* word) const {
  int scratch[3];
  const int n = one_word_frame(0, 0, scratch);
  int got = 0;
  CARTPLAN_MPI_CALL(MPI_Get_count(&status, MPI_INT, &got));
  assert(got == n && frame[0] == seq_ * kPerConstruction + round && "a line peer's next set-up message is its word of the sweep");
  (void)round;
  *word = frame[n - 1];
  return {};
}

// One round: this rank's word to each line peer of the round, and theirs. A line peer's word
// is held (it came during an earlier construction), or else its next message on the set-up
// tag: every message of earlier constructions was consumed by them, and it can send this rank
// nothing later before it has this rank's word of the round (non-overtaking). So it is received
// from that peer by name into a fixed frame, and a later construction's message from any rank
// stays in MPI until that construction receives it. Without room (no requests kept), MPI_Sendrecv
// with one line peer after the other in increasing coordinate, and MPI_Send to one whose word is
// held (it waits for this rank's): every rank, with room or not, takes its line peers in that
// order, so the smallest pair (by coordinates) not yet done can always finish; nobody waits
// for good. Every blocking call here is progressing_wait.h's (see the top of this file).
MpiStatus SetupChannel::sweep_round(engine::graph::GridVerdict* v, bool room, std::vector<Raw>* held, SetupCounts* counts) {
  int* frame = verdicts_[static_cast<std::size_t>(v->round())].data();
  const int n = one_word_frame(seq_ * kPerConstruction + v->round(), v->word(), frame);
  for (int i = 0; room && i < v->peers(); ++i) {
    verdict_requests_.push_back(MPI_REQUEST_NULL);  // within reserve_sweep's room
    CARTPLAN_MPI_CALL(MPI_Isend(frame, n, MPI_INT, v->peer(i), frame_tag_, comm_, &verdict_requests_.back()));
  }
  for (int i = 0; i < v->peers(); ++i) {
    const int from = v->peer(i);
    int word = 0;
    if (take_held(held, from, v->round(), &word)) {
      if (!room) CARTPLAN_MPI_CALL(progressing_send(frame, n, MPI_INT, from, frame_tag_, comm_));
    } else {
      std::array<int, 3> in{};
      MPI_Status status;
      if (room) CARTPLAN_MPI_CALL(progressing_recv(in.data(), 3, MPI_INT, from, frame_tag_, comm_, &status));
      else CARTPLAN_MPI_CALL(progressing_sendrecv(frame, n, MPI_INT, from, frame_tag_, in.data(), 3, MPI_INT, from, frame_tag_, comm_, &status));
      MpiStatus s = sweep_word(in.data(), status, v->round(), &word);
      if (!s.ok()) return s;
    }
    const bool taken = v->take(from, word);  // a malformed word, or one from a rank that is no line peer of the round, is our bug
    assert(taken && "every word of the round is one class from one of its line peers");
    (void)taken;
  }
  counts->sent += v->peers();
  counts->received += v->peers();
  counts->sent_bytes += static_cast<std::int64_t>(v->peers()) * static_cast<std::int64_t>(sizeof(int));
  return {};
}

MpiStatus SetupChannel::agree_grid(int rank, const std::vector<int>& dims, int code, bool room, int* verdict, SetupCounts* counts) {
  if (static_cast<int>(dims.size()) > std::min(kMaxGridRounds, kPerConstruction - 1))
    return mpi_error(MPI_ERR_INTERN, "the grid has too many dimensions for the tag encoding");
  verdict_requests_.clear();
  std::size_t peers = 0;
  for (int e : dims) peers += static_cast<std::size_t>(e - 1);
  assert((!room || verdict_requests_.capacity() >= peers) && "reserve_sweep made the room for the sends");
  (void)peers;
  engine::graph::GridVerdict v(rank, dims, code);
  std::vector<Raw> held = take_early();  // moved out of early_: allocates nothing
  MpiStatus s;
  for (; s.ok() && !v.done(); v.next()) s = sweep_round(&v, room, &held, counts);
  seq_ = (seq_ + 1) % slots_;
  if (!s.ok()) {  // MPI itself failed: nothing is left waiting here
    abandon(&verdict_requests_);
    return s;
  }
  assert(held.empty() && "every held word belongs to a line peer of some round");
  // Every line peer takes this rank's word of every round, so these end.
  CARTPLAN_MPI_CALL(progressing_waitall(static_cast<int>(verdict_requests_.size()), verdict_requests_.data(), MPI_STATUSES_IGNORE));
  *verdict = v.verdict();
  return {};
}

}  // namespace cartplan::mpi
