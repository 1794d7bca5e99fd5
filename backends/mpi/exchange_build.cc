// Exchange::build: the program engine::lower() makes for the caller's blocks, realized with
// addresses, counts and datatypes. Every location becomes an address, every message one
// MPI_Isend or MPI_Irecv with fixed arguments, every local step a memcpy, a datatype copy or a
// combine. The layout rules (packing, staging, zero-copy forwarding, scratch) are all lower()'s.
#include <algorithm>
#include <cassert>
#include <climits>
#include <string>

#include "backends/mpi/exchange.h"
#include "engine/lower.h"

namespace cartplan::mpi {
namespace {

// A block is contiguous when its elements are adjacent and start at its address. Blocks
// usually share a few datatypes, so the answer is remembered per type within one build.
class ContiguityCache {
 public:
  bool operator()(MPI_Datatype type) {
    for (const auto& [known, answer] : known_)
      if (known == type) return answer;
    const bool answer = contiguous_type(type);
    if (known_.size() < 8) known_.emplace_back(type, answer);
    return answer;
  }

 private:
  std::vector<std::pair<MPI_Datatype, bool>> known_;
};

// The caller's blocks as the lowering sees them. Blocks that are not sent or received are never
// looked at: their arguments are not significant (count -1 and MPI_DATATYPE_NULL are allowed
// there).
engine::Layout layout_of_call(const ExchangeSpec& spec, const std::vector<std::int64_t>& block_bytes,
                              const std::vector<char>& send_used, const std::vector<char>& recv_used) {
  ContiguityCache contiguous;
  auto layout_of = [&](const BlockSpec& b, bool used, std::int64_t bytes) {
    if (!used || b.count <= 0 || b.type == MPI_DATATYPE_NULL) return engine::BlockLayout{0, true};
    if (bytes < 0) {
      MPI_Count size = 0;
      MPI_Type_size_x(b.type, &size);
      bytes = static_cast<std::int64_t>(size) * b.count;
    }
    return engine::BlockLayout{bytes, contiguous(b.type)};
  };
  engine::Layout layout;
  if (extended_op(spec.op)) {
    // Every block states its own size; mismatches across ranks are found on arrival.
    for (const BlockSpec& b : spec.send) layout.send.push_back(layout_of(b, true, -1));
    for (const BlockSpec& b : spec.recv) layout.recv.push_back(layout_of(b, true, -1));
    layout.unit = layout_of(spec.unit, true, -1);
    layout.shape_bytes = {layout.unit.bytes};  // one count and datatype per call: every scratch block is one unit
    for (char user : spec.recv_user) layout.recv_user.push_back(user != 0);
    return layout;
  }
  layout.shape_bytes = block_bytes;
  auto bytes_of_block = [&](std::size_t i) { return block_bytes[block_bytes.size() == 1 ? 0 : i]; };
  for (std::size_t i = 0; i < spec.send.size(); ++i) layout.send.push_back(layout_of(spec.send[i], send_used[i], bytes_of_block(i)));
  for (std::size_t i = 0; i < spec.recv.size(); ++i) layout.recv.push_back(layout_of(spec.recv[i], recv_used[i], bytes_of_block(i)));
  return layout;
}

}  // namespace

// One build: the exchange under construction and what its steps share.
class ExchangeBuilder {
 public:
  ExchangeBuilder(Exchange& x, const ExchangeSpec& spec, const engine::Layout& layout) : x_(x), spec_(spec), layout_(layout) {}

  // Memory: one staging arena, and scratch blocks laid out like one block of the call (from
  // the true lower bound to the true upper bound of its last element).
  MpiStatus allocate() {
    const engine::Program& program = x_.program_;
    x_.arena_.resize(static_cast<std::size_t>(std::max<std::int64_t>(program.staging_bytes, 1)));
    MPI_Aint unit_span = 0;
    if (!program.scratch_bytes.empty()) {
      MPI_Aint lb = 0, extent = 0, textent = 0;
      CARTPLAN_MPI_CALL(MPI_Type_get_extent(spec_.unit.type, &lb, &extent));
      CARTPLAN_MPI_CALL(MPI_Type_get_true_extent(spec_.unit.type, &unit_true_lb_, &textent));
      unit_span = static_cast<MPI_Aint>(spec_.unit.count - 1) * extent + textent;
    }
    x_.scratch_.assign(program.scratch_bytes.size(), std::vector<unsigned char>(static_cast<std::size_t>(std::max<MPI_Aint>(unit_span, 1))));
    return {};
  }

  // Every phase's local steps and messages, then the final steps.
  MpiStatus assemble(const Lanes& lanes, int lane) {
    const engine::Program& program = x_.program_;
    const std::size_t nphases = program.phases.size();
    x_.before_.resize(nphases);
    x_.after_.resize(nphases);
    std::size_t widest = 0;
    for (std::size_t p = 0; p < nphases; ++p) {
      const engine::PhaseProgram& ph = program.phases[p];
      x_.phase_begin_.push_back(x_.requests_.size());
      MpiStatus st = actions_of(ph.before, &x_.before_[p]);
      if (st.ok()) st = actions_of(ph.after, &x_.after_[p]);
      if (!st.ok()) return st;
      for (const engine::Message& m : ph.messages) {
        Exchange::Post post{m.recv, nullptr, 0, MPI_BYTE, m.peer, lanes.tag(lane, m.tag), m.phase, m.round, m.tag};
        st = post_of(m, &post);
        if (!st.ok()) return st;
        Exchange::expect_bytes(&post);
        x_.requests_.push_back(MPI_REQUEST_NULL);
        x_.posts_.push_back(post);
      }
      widest = std::max(widest, ph.messages.size());
      if (!ph.messages.empty()) ++x_.messaging_phases_;
    }
    x_.phase_begin_.push_back(x_.requests_.size());
    x_.statuses_.resize(widest);
    x_.indices_.resize(widest);
    MpiStatus st = actions_of(program.final_steps, &x_.final_);
    if (!st.ok()) return st;
    x_.pack_buffer_.resize(static_cast<std::size_t>(pack_max_));
    x_.find_one_phase();
    return {};
  }

 private:
  // A location as (address, count, datatype).
  BlockSpec place(const engine::Loc& l) const {
    switch (l.kind) {
      case engine::Loc::Kind::kSend: return spec_.send[static_cast<std::size_t>(l.index)];
      case engine::Loc::Kind::kRecv: return spec_.recv[static_cast<std::size_t>(l.index)];
      case engine::Loc::Kind::kStaging: return BlockSpec{x_.arena_.data() + l.offset, l.bytes, MPI_BYTE};
      case engine::Loc::Kind::kScratch:
        assert(l.bytes == layout_.unit.bytes && "scratch blocks are laid out like the call's one block");
        return BlockSpec{x_.scratch_[static_cast<std::size_t>(l.index)].data() - unit_true_lb_, spec_.unit.count, spec_.unit.type};
    }
    return {};
  }

  // (count, datatype) of one location as an int count: MPI-3 point-to-point calls take ints.
  MpiStatus int_count(const BlockSpec& b, int* count, MPI_Datatype* type) {
    if (b.count <= INT_MAX) {
      *count = static_cast<int>(b.count);
      *type = b.type;
      return {};
    }
    MpiStatus s = large_count_type(b.count, b.type, type);
    if (!s.ok()) return s;
    x_.owned_types_.push_back(*type);
    *count = 1;
    return {};
  }

  // One message: nothing (a zero-byte message still travels, its peer expects it), one
  // location as it is, or a struct datatype over several at absolute addresses (MPI_BOTTOM).
  MpiStatus post_of(const engine::Message& m, Exchange::Post* post) {
    if (m.parts.empty()) return {};
    if (m.parts.size() == 1) {
      const BlockSpec b = place(m.parts[0]);
      post->buf = b.addr;
      return int_count(b, &post->count, &post->type);
    }
    std::vector<int> lens;
    std::vector<MPI_Aint> displs;
    std::vector<MPI_Datatype> types;
    for (const engine::Loc& l : m.parts) {
      const BlockSpec b = place(l);
      MPI_Aint addr = 0;
      CARTPLAN_MPI_CALL(MPI_Get_address(b.addr, &addr));
      displs.push_back(addr);
      lens.push_back(0);
      types.push_back(MPI_BYTE);
      MpiStatus s = int_count(b, &lens.back(), &types.back());
      if (!s.ok()) return s;
    }
    CARTPLAN_MPI_CALL(MPI_Type_create_struct(static_cast<int>(lens.size()), lens.data(), displs.data(), types.data(), &post->type));
    CARTPLAN_MPI_CALL(MPI_Type_commit(&post->type));
    x_.owned_types_.push_back(post->type);
    post->buf = MPI_BOTTOM;
    post->count = 1;
    return {};
  }

  MpiStatus action_of(const engine::Step& s, std::vector<Exchange::Action>& list) {
    using Kind = Exchange::Action::Kind;
    Exchange::Action a;
    const BlockSpec from = place(s.from), to = place(s.to);
    a.copy = Exchange::LocalCopy{from, to, 0};
    if (s.combine) {
      a.kind = Kind::kCombine;
      MPI_Aint lb = 0;
      CARTPLAN_MPI_CALL(MPI_Type_get_extent(from.type, &lb, &a.extent));
      a.fast = fast_combine(x_.op_, from.type);
    } else if (s.from.contiguous && s.to.contiguous) {
      a.kind = Kind::kMove;
      a.copy.memcpy_bytes = static_cast<std::size_t>(s.from.bytes);
    } else {
      a.kind = Kind::kTyped;
      if (from.count <= INT_MAX && s.from.bytes < INT_MAX / 2) {
        int size = 0;
        CARTPLAN_MPI_CALL(MPI_Pack_size(static_cast<int>(from.count), from.type, x_.comm_, &size));
        pack_max_ = std::max(pack_max_, size);
      }
    }
    // Neighbouring blocks often sit next to each other on both sides (blocks of one round are
    // consecutive in the caller's buffer): one memcpy per run instead of one per block.
    if (a.kind == Kind::kMove && !list.empty() && list.back().kind == Kind::kMove) {
      Exchange::LocalCopy& prev = list.back().copy;
      if (static_cast<const char*>(prev.from.addr) + prev.memcpy_bytes == a.copy.from.addr &&
          static_cast<const char*>(prev.to.addr) + prev.memcpy_bytes == a.copy.to.addr) {
        prev.memcpy_bytes += a.copy.memcpy_bytes;
        return {};
      }
    }
    list.push_back(a);
    return {};
  }

  MpiStatus actions_of(const std::vector<engine::Step>& steps, std::vector<Exchange::Action>* list) {
    for (const engine::Step& s : steps) {
      MpiStatus st = action_of(s, *list);
      if (!st.ok()) return st;
    }
    return {};
  }

  Exchange& x_;
  const ExchangeSpec& spec_;
  const engine::Layout& layout_;
  MPI_Aint unit_true_lb_ = 0;
  int pack_max_ = 0;
};

MpiStatus Exchange::build(NeighborhoodComm& nc, const ExchangeSpec& spec, const Options& options, const Settlement& agreed,
                          int lane, std::unique_ptr<Exchange>* out) {
  auto x = std::unique_ptr<Exchange>(new Exchange());
  x->comm_ = nc.internal();
  x->entry_ = agreed.entry;
  x->shared_ = nc.shared();
  x->lane_ = lane;
  x->op_ = spec.reduce_op;
  const ir::Plan& plan = x->entry_->plan;
  const engine::BoundPlan& bound = x->entry_->bound;
  const Lanes& lanes = x->shared_->lanes;
  for (const engine::BoundRound& br : bound.rounds)
    if (br.tag < 0 || br.tag >= lanes.max_rounds())
      return mpi_error(MPI_ERR_TAG, "round tag " + std::to_string(br.tag) + " does not fit in this communicator's tag space (" +
                                        std::to_string(lanes.max_rounds()) + " rounds at most)");
  const engine::Layout layout = layout_of_call(spec, agreed.block_bytes, agreed.send_used, agreed.recv_used);
  Result<engine::Program> lowered = engine::lower(plan, bound, layout, lower_options(options));
  assert(lowered && "the backend's blocks fit the plan it bound");
  if (!lowered) return mpi_error(MPI_ERR_INTERN, "cartplan could not lower its plan: " + lowered.error());
  x->program_ = std::move(*lowered);
  ExchangeBuilder builder(*x, spec, layout);
  MpiStatus st = builder.allocate();
  if (st.ok()) st = builder.assemble(lanes, lane);
  if (!st.ok()) return st;
  *out = std::move(x);
  return {};
}

void Exchange::expect_bytes(Post* post) {
  int size = 0;
  if (post->recv && post->count >= 0 && MPI_Type_size(post->type, &size) == MPI_SUCCESS && size >= 0)
    post->bytes = static_cast<std::size_t>(size) * static_cast<std::size_t>(post->count);
}

// A schedule given message by message (the halo API): no lowering, no local steps.
MpiStatus Exchange::from_schedule(NeighborhoodComm& nc, Schedule schedule, Kind kind, int lane, std::unique_ptr<Exchange>* out) {
  auto x = std::unique_ptr<Exchange>(new Exchange());
  x->owned_types_ = std::move(schedule.owned_types);  // freed by the destructor, also on error
  x->scratch_ = std::move(schedule.memory);
  x->comm_ = nc.internal();
  x->shared_ = nc.shared();
  const bool later = kind == Kind::kPersistent && lane == kLaneLater;
  x->lane_ = kind != Kind::kBlocking && !later ? lane : Lanes::blocking_lane();
  const Lanes& lanes = x->shared_->lanes;
  std::size_t widest = 0;
  for (std::size_t p = 0; p < schedule.phases.size(); ++p) {
    const std::vector<ScheduledMessage>& messages = schedule.phases[p];
    x->phase_begin_.push_back(x->requests_.size());
    for (const ScheduledMessage& m : messages) {
      if (m.plan_tag < 0 || m.plan_tag >= lanes.max_rounds())
        return mpi_error(MPI_ERR_TAG, "message tag " + std::to_string(m.plan_tag) + " does not fit in this communicator's tag space (" +
                                          std::to_string(lanes.max_rounds()) + " tags at most)");
      x->posts_.push_back(Post{m.recv, m.buf, m.count, m.type, m.peer, lanes.tag(x->lane_, m.plan_tag), static_cast<int>(p), 0, m.plan_tag});
      expect_bytes(&x->posts_.back());
      x->requests_.push_back(MPI_REQUEST_NULL);
    }
    widest = std::max(widest, messages.size());
    if (!messages.empty()) ++x->messaging_phases_;
  }
  x->phase_begin_.push_back(x->requests_.size());
  x->before_.resize(schedule.phases.size());
  x->after_.resize(schedule.phases.size());
  x->statuses_.resize(widest);
  x->indices_.resize(widest);
  x->find_one_phase();
  // The caller built every message from one description that all ranks agreed on.
  x->sizes_agreed_ = true;
  x->hook_phases_ = nc.options().progress_anywhere;
  if (later) {  // kind_ stays kBlocking (no lane to release) until hold_lane
    *out = std::move(x);
    return {};
  }
  x->kind_ = kind;  // only now: the destructor releases a persistent exchange's lane
  if (kind == Kind::kPersistent) x->shared_->lanes.hold(x->lane_);
  if (kind == Kind::kNonblocking) attach_lane(*x, lane);
  *out = std::move(x);
  return {};
}

void Exchange::hold_lane(int lane) noexcept {
  const Lanes& lanes = shared_->lanes;
  for (Post& p : posts_) p.tag = lanes.tag(lane, p.plan_tag);
  lane_ = lane;
  kind_ = Kind::kPersistent;
  shared_->lanes.hold(lane);
}

}  // namespace cartplan::mpi
