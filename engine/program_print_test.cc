// Program printers: the text table and the JSON of small known programs, and determinism.
#include "engine/program_print.h"

#include <doctest/doctest.h>

#include <optional>
#include <string>

#include "engine/bind.h"
#include "engine/grid.h"
#include "engine/lower.h"
#include "engine/planner.h"
#include "engine/stencils.h"

namespace cartplan::engine {
namespace {

// The program of `rank` for `plan` on `grid` with blocks of `bytes`.
Program program_of(const ir::Plan& plan, const Grid& grid, int rank, std::int64_t bytes,
                   std::optional<Coords> root = std::nullopt, const LowerOptions& options = {}) {
  const Result<Binder> b = Binder::create(plan);
  REQUIRE(b.ok());
  const Result<BoundPlan> bound = b->bind(grid, grid.coords(rank), {bytes}, root);
  REQUIRE(bound.ok());
  const Result<Program> p = lower(plan, *bound, contiguous_layout(plan, *bound), options);
  REQUIRE(p.ok());
  return *p;
}

bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

TEST_CASE("text: alltoall box:d=1,n=3,f=-1 on a ring of 3, rank 0") {
  const Program p = program_of(plan_direct(ir::Op::kAlltoall, *stencils::box(1, 3, -1)), *Grid::create({3}, {true}), 0, 8);
  const std::string text = to_text(p);
  CAPTURE(text);
  // Offsets -1, 0, 1: block 0 goes to rank 2 (0 - 1 wrapped), block 2 to rank 1; the zero
  // offset is a final copy.
  CHECK(text.rfind("program alltoall, rank 0: 1 phase, staging 0 B, 0 scratch blocks\nphase 0\n", 0) == 0);
  CHECK(has_line(text, "  recv    from 1     tag 0    round 0          8 B  recv[0]"));
  CHECK(has_line(text, "  recv    from 2     tag 1    round 1          8 B  recv[2]"));
  CHECK(has_line(text, "  send    to   2     tag 0    round 0          8 B  send[0]"));
  CHECK(has_line(text, "  send    to   1     tag 1    round 1          8 B  send[2]"));
  CHECK(has_line(text, "final"));
  CHECK(has_line(text, "  final   copy    send[1] -> recv[1]  (8 B)"));
  CHECK(has_line(text,
                 "summary: 4 messages (0 of several parts), sent 16 B, received 16 B, copied 8 B, combined 0 B, staging 0 B"));
  // Receives are listed before sends.
  CHECK(text.find("  recv ") < text.find("  send "));
}

TEST_CASE("text: packing into staging and combining steps") {
  const Neighborhood n = *stencils::box(2, 3, -1);
  const Grid torus = *Grid::create({3, 3}, {true, true});
  const std::string a = to_text(program_of(plan_combining(ir::Op::kAlltoall, n, {0, 1}), torus, 4, 8));
  CAPTURE(a);
  CHECK(has_line(a, "  before  copy    send[0] -> stage[0+8]  (8 B)"));
  CHECK(has_line(a, "  send    to   1     tag 0    round 0         24 B  stage[0+24]"));
  CHECK(a.find("staging 192 B") != std::string::npos);
  const std::string r = to_text(program_of(plan_combining(ir::Op::kAllreduce, n, {0, 1}), torus, 4, 8));
  CAPTURE(r);
  CHECK(r.rfind("program allreduce, rank 4: 2 phases, staging 0 B, 3 scratch blocks\n", 0) == 0);
  CHECK(has_line(r, "  recv    from 7     tag 0    round 0          8 B  scratch[0]"));
  CHECK(has_line(r, "  after   combine send[0] -> scratch[0]  (8 B)"));
  CHECK(r.find("combined 32 B") != std::string::npos);
}

TEST_CASE("locations") {
  CHECK(to_string(Loc{Loc::Kind::kSend, 3, 0, 8, true}) == "send[3]");
  CHECK(to_string(Loc{Loc::Kind::kRecv, 0, 0, 8, false}) == "recv[0]~");
  CHECK(to_string(Loc{Loc::Kind::kStaging, 0, 128, 64, true}) == "stage[128+64]");
  CHECK(to_string(Loc{Loc::Kind::kScratch, 2, 0, 16, true}) == "scratch[2]");
}

TEST_CASE("json: fields of a known program, counts, struct messages, deterministic output") {
  const ir::Plan plan = plan_direct(ir::Op::kAlltoall, *stencils::box(1, 3, -1));
  const Program p = program_of(plan, *Grid::create({3}, {true}), 0, 8);
  const nlohmann::json j = to_json(p);
  CHECK(j["format"] == "cartplan.program/2");
  CHECK(j["op"] == "alltoall");
  CHECK(j["rank"] == 0);
  CHECK(j["staging_bytes"] == 0);
  REQUIRE(j["phases"].size() == 1);
  const nlohmann::json& m = j["phases"][0]["messages"][0];
  CHECK(m["direction"] == "recv");
  CHECK(m["peer"] == 1);
  CHECK(m["tag"] == 0);
  CHECK(m["bytes"] == 8);
  CHECK(m["parts"] == nlohmann::json::parse(R"([{"kind": "recv", "index": 0, "bytes": 8, "contiguous": true}])"));
  CHECK(m["trailer"] == false);
  {
    // With a trailer on every message: one byte more, its part last, past the (empty) arena.
    LowerOptions lo;
    lo.trailer_min_bytes = 0;
    const Program t = program_of(plan, *Grid::create({3}, {true}), 0, 8, std::nullopt, lo);
    const nlohmann::json tj = to_json(t);
    const nlohmann::json& tm = tj["phases"][0]["messages"][0];
    CAPTURE(to_text(t));
    CHECK(tm["trailer"] == true);
    CHECK(tm["bytes"] == 9);
    CHECK(tm["parts"][1] == nlohmann::json::parse(R"({"kind": "stage", "offset": 3, "bytes": 1, "contiguous": true})"));
    // Trailers are numbered as the messages are made, sends first; a byte apart from the arena.
    CHECK(to_text(t).find("  recv    from 1     tag 0    round 0          9 B  recv[0] trailer:stage[3+1]\n") != std::string::npos);
    CHECK(t.staging_bytes == 1 + 4);
  }
  CHECK(j["final_steps"][0]["from"]["kind"] == "send");
  CHECK(j["final_steps"][0]["to"]["index"] == 1);
  CHECK(j["counts"]["messages"] == 4);
  CHECK(j["counts"]["copied_bytes"] == 8);

  // The same program printed twice, or lowered again, gives the same text.
  const Program again = program_of(plan, *Grid::create({3}, {true}), 0, 8);
  CHECK(to_json(again).dump() == j.dump());
  CHECK(to_json(p).dump(2) == j.dump(2));
  CHECK(to_text(again) == to_text(p));

  // Staging locations carry offsets; messages of several parts are counted as struct messages.
  const Program r = program_of(plan_combining(ir::Op::kReduceScatter, *stencils::box(2, 3, -1), {0, 1}),
                               *Grid::create({4, 4}, {true, true}), 5, 16);
  const nlohmann::json rj = to_json(r);
  std::int64_t several = 0;
  for (const nlohmann::json& ph : rj["phases"])
    for (const nlohmann::json& msg : ph["messages"]) several += msg["parts"].size() > 1;
  CHECK(several > 0);
  CHECK(rj["counts"]["struct_messages"] == several);
  const nlohmann::json s = to_json(program_of(plan_combining(ir::Op::kAlltoall, *stencils::box(2, 3, -1), {0, 1}),
                                              *Grid::create({3, 3}, {true, true}), 4, 8));
  CHECK(s["phases"][0]["before"][1]["to"] == nlohmann::json::parse(R"({"kind": "stage", "offset": 8, "bytes": 8, "contiguous": true})"));
}

TEST_CASE("program_without_names: tags and rounds do not count, everything else does") {
  const Neighborhood nbh = *stencils::box(2, 3, -1);
  const ir::Plan plan = plan_combining(ir::Op::kAlltoall, nbh, auto_dim_order(nbh));
  const Program p = program_of(plan, *Grid::create({3, 3}, {true, true}), 4, 8);
  const std::string base = program_without_names(to_json(p).dump());
  REQUIRE(!base.empty());
  CHECK(base.find("\"tag\"") == std::string::npos);
  CHECK(base.find("\"round\"") == std::string::npos);
  CHECK(base.find("\"peer\"") != std::string::npos);

  Program renamed = p, moved = p;
  for (PhaseProgram& ph : renamed.phases)
    for (Message& m : ph.messages) {
      m.tag += 100;
      m.round += 1;
    }
  CHECK(program_without_names(to_json(renamed).dump()) == base);
  CHECK(to_json(renamed).dump() != to_json(p).dump());

  REQUIRE(!moved.phases.empty());
  REQUIRE(!moved.phases[0].messages.empty());
  moved.phases[0].messages[0].peer = (moved.phases[0].messages[0].peer + 1) % 9;
  CHECK(program_without_names(to_json(moved).dump()) != base);

  CHECK(program_without_names("not json").empty());
  CHECK(program_without_names("[1, 2]").empty());
}

}  // namespace
}  // namespace cartplan::engine
