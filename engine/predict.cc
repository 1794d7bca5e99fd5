// The cost model applied to a plan: counts messages, phases, wire and copied bytes, and
// messages above the eager limit, then prices them.
#include "engine/predict.h"

#include <cassert>
#include <cstdio>

namespace cartplan::engine {

bool wraps_to_self(const ir::Offset& shift, const Grid& grid) {
  for (int k = 0; k < grid.ndims(); ++k) {
    if (shift[k] == 0) continue;
    if (!grid.periods()[k] || shift[k] % grid.dims()[k] != 0) return false;
  }
  return true;
}

// The share of the grid's processes that have a peer at +shift: 1 on a torus, less on a mesh,
// where a process near the boundary skips the round. Predictions are means over ranks, so they
// are the same on every rank (the plan must be) and exact for small symmetric meshes, where
// every process is a boundary process (a 2x2 mesh sends 3 of 8 direct messages per process).
double peer_share(const ir::Offset& shift, const Grid& grid) {
  double share = 1;
  for (int k = 0; k < grid.ndims(); ++k) {
    if (shift[k] == 0 || grid.periods()[k]) continue;
    const int n = grid.dims()[k], s = shift[k] < 0 ? -shift[k] : shift[k];
    share *= s >= n ? 0.0 : static_cast<double>(n - s) / n;
  }
  return share;
}

CostBreakdown predict(const ir::Plan& plan, const std::vector<std::int64_t>& block_bytes, const CostModel& model,
                      const std::optional<Grid>& grid, std::int64_t struct_min_bytes, const std::vector<bool>& contiguous) {
  assert(block_bytes.size() == 1 || static_cast<int>(block_bytes.size()) == plan.num_blocks());
  assert(contiguous.size() <= 1 || static_cast<int>(contiguous.size()) == plan.num_blocks());
  // The block an entry stands for (a temp slot: the block it is shaped like). Blocks of ops
  // without own shapes all look like block 0 (allgather, reductions).
  const bool own = ir::blocks_have_own_shape(plan.op());
  auto block_of = [&](const ir::BufRef& r) -> std::size_t {
    if (!own) return 0;
    return static_cast<std::size_t>(r.kind == ir::BufKind::kTemp ? plan.temp_slots()[r.index].shape_of : r.index);
  };
  auto bytes = [&](const ir::BufRef& r) {
    const std::int64_t b = block_bytes[block_bytes.size() == 1 ? 0 : block_of(r)];
    return static_cast<double>(b > 0 ? b : 0);
  };
  // Whether the block behind an entry lies contiguously in the caller's memory.
  auto contiguous_entry = [&](const ir::BufRef& r) {
    if (contiguous.empty()) return true;
    return static_cast<bool>(contiguous[contiguous.size() == 1 ? 0 : block_of(r)]);
  };
  const bool use_grid = grid && grid->ndims() == plan.ndims();
  CostBreakdown c;
  for (const ir::Phase& phase : plan.phases()) {
    bool any_message = false;
    for (const ir::Round& r : phase.rounds) {
      double b = 0, finals = 0;  // all entries; those received into a recv block (not forwarded)
      int segments = 0, final_segments = 0;
      bool any_temp = false;
      for (std::size_t e = 0; e < r.send.size(); ++e) {
        const double be = bytes(r.send[e]);
        b += be;
        segments += be > 0;
        if (r.recv[e].kind != ir::BufKind::kTemp) {
          finals += be;
          final_segments += be > 0;
        } else {
          any_temp = any_temp || be > 0;
        }
      }
      // The lowering's rule (lower.h): struct datatypes when the mean entry reaches the threshold.
      const bool by_struct = struct_min_bytes >= 0 && segments > 0 && b >= static_cast<double>(struct_min_bytes) * segments;
      if (use_grid && wraps_to_self(r.shift, *grid)) {
        c.copy_bytes += finals;  // forwarded entries are aliased, final ones copied
        continue;
      }
      const double share = use_grid ? peer_share(r.shift, *grid) : 1.0;
      if (share == 0) continue;
      any_message = true;
      c.messages += share;
      c.wire_bytes += share * b;
      // Packed at the sender, final entries unpacked at the receiver; by struct datatype no
      // copies, but the datatype engine walks every entry on both sides.
      if (r.send.size() > 1 && !by_struct) c.copy_bytes += share * (b + finals);
      // Segments: every entry at the sender; at the receiver every final entry (the caller's
      // scattered blocks) and one for the temp slots, which lie back to back in staging.
      if (r.send.size() > 1 && by_struct) {
        c.segments += share * (segments + final_segments + (any_temp ? 1 : 0));
        c.scatter_bytes += share * finals;
      }
      // Above the eager limit a contiguous message (one entry, or packed) is read with a single
      // copy, a struct datatype message is pipelined through fragments (cost_model.h).
      const bool single_copy = r.send.size() > 1 ? !by_struct : contiguous_entry(r.send[0]);
      if (b > static_cast<double>(model.eager_limit_bytes)) {
        if (single_copy) {
          c.rendezvous += share;
          c.single_copy_bytes += share * b;
        } else {
          c.pipelined += share;
        }
      }
    }
    if (any_message) ++c.phases;
    for (const ir::Copy& copy : phase.copies) c.copy_bytes += bytes(copy.to);
  }
  for (const ir::Copy& copy : plan.copies()) c.copy_bytes += bytes(copy.to);
  c.message_us = c.messages * model.alpha_us;
  c.phase_us = c.phases * model.phase_us;
  c.wire_us = c.wire_bytes * model.beta_us_per_byte;
  c.copy_us = c.copy_bytes * model.copy_us_per_byte;
  c.rendezvous_us = c.rendezvous * model.rendezvous_us;
  c.single_copy_us = c.single_copy_bytes * model.single_copy_us_per_byte;
  c.pipeline_us = c.pipelined * model.pipeline_us;
  c.segment_us = c.segments * model.segment_us;
  c.scatter_us = c.scatter_bytes * model.scatter_us_per_byte;
  return c;
}

std::string explain(const CostBreakdown& c, const CostModel& model) {
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "messages %g x %.3f = %.3f | phases %d x %.3f = %.3f | wire %.0f B x %.6f = %.3f | "
                "copied %.0f B x %.6f = %.3f | rendezvous %g x %.3f = %.3f | single-copy %.0f B x %.6f = %.3f | "
                "pipelined %g x %.3f = %.3f | "
                "segments %g x %.3f = %.3f | "
                "scattered %.0f B x %.6f = %.3f | total %.3f us",
                c.messages, model.alpha_us, c.message_us, c.phases, model.phase_us, c.phase_us, c.wire_bytes,
                model.beta_us_per_byte, c.wire_us, c.copy_bytes, model.copy_us_per_byte, c.copy_us, c.rendezvous,
                model.rendezvous_us, c.rendezvous_us, c.single_copy_bytes, model.single_copy_us_per_byte,
                c.single_copy_us, c.pipelined, model.pipeline_us, c.pipeline_us, c.segments, model.segment_us, c.segment_us, c.scatter_bytes,
                model.scatter_us_per_byte, c.scatter_us, c.total_us());
  return buf;
}

}  // namespace cartplan::engine
