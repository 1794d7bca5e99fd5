// Symbolic execution of a plan for one process (the second layer of verify, and the source of
// the routing facts that bind() and the DOT view use).
#include "ir/trace.h"

#include <cassert>
#include <cstdint>
#include <string>

namespace cartplan::ir {
namespace {

constexpr int kInitial = -1;
// Bound on origin coordinates so that chains of shifts from a hostile plan cannot overflow.
constexpr std::int64_t kMaxOrigin = std::int64_t{1} << 30;  // location holds its initial content (the send buffer)

// Which transfer or copy last wrote a location: >= 0 transfer index, kInitial, or
// copy_writer(c) for copy c.
int copy_writer(int copy) { return -2 - copy; }
int copy_of_writer(int writer) { return -2 - writer; }

struct Location {
  std::optional<Content> content;
  int writer = kInitial;
  bool written = false;  // recv blocks: written at most once
};

std::string where(int phase, int round, const char* side, int entry) {
  return "phase " + std::to_string(phase) + ", round " + std::to_string(round) + ", " + side +
         " entry " + std::to_string(entry);
}

std::string describe(const Content& c) {
  return "block " + std::to_string(c.block) + " from " + to_string(c.origin);
}

class Machine {
 public:
  explicit Machine(const Plan& plan) : plan_(plan) {
    send_.resize(plan.num_send_blocks());
    for (int b = 0; b < plan.num_send_blocks(); ++b)
      send_[b].content = Content{b, Offset(plan.ndims(), 0)};
    recv_.resize(plan.num_blocks());
    temp_.resize(plan.temp_slots().size());
  }

  Location& at(const BufRef& ref) {
    switch (ref.kind) {
      case BufKind::kSend: return send_.at(ref.index);
      case BufKind::kRecv: return recv_.at(ref.index);
      case BufKind::kTemp: return temp_.at(ref.index);
    }
    assert(false);
    return send_.at(0);
  }

  // The content recv block `block` must end with; nullopt when its offset has a coordinate
  // beyond kMaxOrigin (e.g. INT_MIN, whose negation is not an int): no transfer can deliver it.
  std::optional<Content> final_content(int block) const {
    Offset origin = plan_.neighborhood()[block];
    for (int& x : origin) {
      if (x > kMaxOrigin || x < -kMaxOrigin) return std::nullopt;
      x = -x;
    }
    return Content{plan_.op() == Op::kAlltoall ? block : 0, origin};
  }

  std::string describe_final(int block) const {
    if (const std::optional<Content> c = final_content(block)) return describe(*c);
    return "block " + std::to_string(plan_.op() == Op::kAlltoall ? block : 0) + " from minus " +
           to_string(plan_.neighborhood()[block]) + ", more than 2^30 positions away";
  }

  // Stores content; recv blocks must be written once and only with their final content.
  // `ctx` names the writer; it is only called when there is an error to report.
  template <class Context>
  void write(const BufRef& ref, const std::optional<Content>& content, int writer, const Context& ctx,
             std::vector<std::string>& errors) {
    Location& loc = at(ref);
    if (ref.kind == BufKind::kRecv) {
      if (loc.written) errors.push_back(ctx() + ": writes " + to_string(ref) + " a second time");
      if (content && !(*content == final_content(ref.index)))
        errors.push_back(ctx() + ": writes " + to_string(ref) + " with " + describe(*content) +
                         ", but its final content is " + describe_final(ref.index));
    }
    loc.content = content;
    loc.writer = writer;
    loc.written = true;
  }

  std::vector<Location> send_, recv_, temp_;

 private:
  const Plan& plan_;
};

}  // namespace

Trace trace(const Plan& plan) {
  Trace tr;
  Machine m(plan);
  std::vector<int> parent;  // per transfer: writer of the location it read

  for (int p = 0; p < static_cast<int>(plan.phases().size()); ++p) {
    const Phase& phase = plan.phases()[p];
    tr.round_start.emplace_back();
    // All rounds of a phase run concurrently: every send reads the state before the phase,
    // and only then are the receives applied.
    const int phase_first = static_cast<int>(tr.transfers.size());
    std::vector<std::optional<Content>> sent;
    for (int r = 0; r < static_cast<int>(phase.rounds.size()); ++r) {
      const Round& round = phase.rounds[r];
      tr.round_start[p].push_back(static_cast<int>(tr.transfers.size()));
      for (int e = 0; e < static_cast<int>(round.send.size()); ++e) {
        const Location& loc = m.at(round.send[e]);
        if (!loc.content)
          tr.errors.push_back(where(p, r, "send", e) + ": reads " + to_string(round.send[e]) +
                              " before it holds data");
        tr.transfers.push_back(Transfer{p, r, e, loc.content.value_or(Content{}), {}});
        sent.push_back(loc.content);
        parent.push_back(loc.writer);
      }
    }
    for (int r = 0; r < static_cast<int>(phase.rounds.size()); ++r) {
      const Round& round = phase.rounds[r];
      for (int e = 0; e < static_cast<int>(round.recv.size()); ++e) {
        const int x = tr.round_start[p][r] + e;
        std::optional<Content> arrived = sent[x - phase_first];
        if (arrived) {
          // The sender is at -shift from the receiver, so an origin o seen by the sender is
          // o - shift seen by the receiver.
          for (std::size_t k = 0; k < arrived->origin.size() && k < round.shift.size(); ++k) {
            const std::int64_t o = std::int64_t{arrived->origin[k]} - round.shift[k];
            if (o > kMaxOrigin || o < -kMaxOrigin) {
              tr.errors.push_back(where(p, r, "recv", e) + ": block travels more than 2^30 positions away");
              arrived.reset();
              break;
            }
            arrived->origin[k] = static_cast<int>(o);
          }
        }
        m.write(round.recv[e], arrived, x, [&] { return where(p, r, "recv", e); }, tr.errors);
      }
    }
  }

  std::vector<int> copy_parent;
  for (int c = 0; c < static_cast<int>(plan.copies().size()); ++c) {
    const Copy& copy = plan.copies()[c];
    const Location& from = m.at(copy.from);
    auto ctx = [c] { return "copy " + std::to_string(c); };
    if (!from.content) tr.errors.push_back(ctx() + ": reads " + to_string(copy.from) + " before it holds data");
    tr.copy_content.push_back(from.content);
    copy_parent.push_back(from.writer);
    const std::optional<Content> content = from.content;
    m.write(copy.to, content, copy_writer(c), ctx, tr.errors);
  }

  for (int i = 0; i < plan.num_blocks(); ++i) {
    const Location& loc = m.recv_[i];
    tr.final_recv.push_back(loc.content);
    if (!loc.written) {
      tr.errors.push_back("recv[" + std::to_string(i) + "] is never written (expected " +
                          m.describe_final(i) + ")");
      continue;
    }
    // Walk the chain of writers back to the send buffer: every transfer on it feeds block i.
    for (int w = loc.writer; w != kInitial;) {
      if (w >= 0) {
        tr.transfers[w].targets.push_back(i);
        w = parent[w];
      } else {
        w = copy_parent[copy_of_writer(w)];
      }
    }
  }
  return tr;
}

}  // namespace cartplan::ir
