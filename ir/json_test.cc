// Tests of the plan JSON form: canonical printing, exact round trips and strict error reporting.
#include "ir/json.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/fixtures.h"

namespace cartplan::ir {
namespace {

using cartplan::testing::recv;
using cartplan::testing::send;
using cartplan::testing::temp;
using nlohmann::json;

// Direct alltoall on a 2-d von Neumann neighbourhood with the zero offset as block 0.
Plan direct_alltoall() {
  PlanParts p;
  p.op = Op::kAlltoall;
  p.kind = PlanKind::kDirect;
  p.ndims = 2;
  p.neighborhood = {{0, 0}, {1, 0}, {-1, 0}, {0, 1}, {0, -1}};
  p.dim_order = {0, 1};
  Phase ph;
  for (int i = 1; i <= 4; ++i) ph.rounds.push_back(Round{p.neighborhood[i], i - 1, {send(i)}, {recv(i)}});
  p.phases = {ph};
  p.copies = {Copy{send(0), recv(0)}};
  p.stats.t = 4;
  p.stats.rounds = 4;
  p.stats.volume = 4;
  p.stats.phase_rounds = {4};
  return Plan(p);
}

// Combining alltoall on {(1,1), (1,0), (0,1)} in order (1, 0), with temp slots and a cost.
Plan combining_alltoall() {
  PlanParts p;
  p.op = Op::kAlltoall;
  p.kind = PlanKind::kCombining;
  p.ndims = 2;
  p.neighborhood = {{1, 1}, {1, 0}, {0, 1}};
  p.dim_order = {1, 0};
  p.temp_slots = {{0}, {0}};
  p.phases = {Phase{1, {Round{{0, 1}, 0, {send(0), send(2)}, {temp(0), recv(2)}}}},
              Phase{0, {Round{{1, 0}, 1, {temp(0), send(1)}, {recv(0), recv(1)}}}}};
  p.stats.t = 3;
  p.stats.rounds = 2;
  p.stats.volume = 4;
  p.stats.phase_rounds = {1, 1};
  p.stats.cutoff_ratio = 0.7142857142857143;
  p.stats.cost = CostInfo{1.5, 0.0003, 4096, 2, 4, 8.1, 7.915200000000001};
  return Plan(p);
}

// Direct allgather: the single send block goes everywhere; a duplicate offset becomes a copy.
Plan direct_allgather() {
  PlanParts p;
  p.op = Op::kAllgather;
  p.kind = PlanKind::kDirect;
  p.ndims = 1;
  p.neighborhood = {{-2}, {3}, {-2}};
  p.dim_order = {0};
  p.phases = {Phase{Phase::kAllDims, {Round{{-2}, 0, {send(0)}, {recv(0)}},
                                     Round{{3}, 1, {send(0)}, {recv(1)}}}}};
  p.copies = {Copy{recv(0), recv(2)}};
  p.stats.t = 3;
  p.stats.rounds = 2;
  p.stats.volume = 2;
  p.stats.phase_rounds = {2};
  p.stats.cutoff_ratio = -0.25;
  p.stats.cost = CostInfo{2.0, 1e-3, 8, 3, 3, 4.016, 6.024};
  return Plan(p);
}

// Combining allgather on {(1,1), (1,2)} in order (0, 1): the tree node (1,0) needs a temp slot,
// recv blocks are also sources.
Plan combining_allgather() {
  PlanParts p;
  p.op = Op::kAllgather;
  p.kind = PlanKind::kCombining;
  p.ndims = 3;
  p.neighborhood = {{1, 1, 0}, {1, 2, 0}, {0, 0, 0}};
  p.dim_order = {0, 1, 2};
  p.temp_slots = {{0}};
  p.phases = {Phase{0, {Round{{1, 0, 0}, 0, {send(0)}, {temp(0)}}}},
              Phase{1, {Round{{0, 1, 0}, 1, {temp(0)}, {recv(0)}},
                        Round{{0, 2, 0}, 2, {temp(0)}, {recv(1)}}}}};
  p.copies = {Copy{send(0), recv(2)}};
  p.stats.t = 2;
  p.stats.rounds = 3;
  p.stats.volume = 3;
  p.stats.phase_rounds = {1, 2};
  return Plan(p);
}

std::vector<Plan> all_plans() {
  return {direct_alltoall(), combining_alltoall(), direct_allgather(), combining_allgather()};
}

// The parse error for a JSON value (built by editing a valid plan's JSON).
std::string error_of(const json& j) {
  Result<Plan> r = plan_from_json(j);
  REQUIRE_FALSE(r.ok());
  return r.error();
}

std::string error_of(const std::string& text) {
  Result<Plan> r = plan_from_json_string(text);
  REQUIRE_FALSE(r.ok());
  return r.error();
}

json valid(const Plan& plan) { return json::parse(to_json_string(plan)); }

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Every error names its path first, then says what is wrong.
void check_error(const std::string& msg, const std::string& path, std::vector<std::string> words) {
  INFO("message: " << msg);
  CHECK(msg.rfind(path + ": ", 0) == 0);
  for (const std::string& w : words) CHECK(contains(msg, w));
}

// Syntax errors have no path; they name the byte offset instead.
void check_syntax_error(const std::string& msg, std::vector<std::string> words) {
  INFO("message: " << msg);
  CHECK(msg.rfind("invalid JSON at byte ", 0) == 0);
  CHECK(!contains(msg, "[json.exception"));
  for (const std::string& w : words) CHECK(contains(msg, w));
}

TEST_CASE("print -> parse -> print is byte identical and parse(print(p)) == p") {
  for (const Plan& plan : all_plans()) {
    const std::string text = to_json_string(plan);
    INFO(text);
    Result<Plan> back = plan_from_json_string(text);
    REQUIRE_MESSAGE(back.ok(), back.error());
    CHECK(*back == plan);
    CHECK(to_json_string(*back) == text);
    CHECK(text.back() == '\n');
    // The in-memory form round-trips as well.
    Result<Plan> direct = plan_from_json(json::parse(to_json(plan).dump()));
    REQUIRE(direct.ok());
    CHECK(*direct == plan);
  }
}

TEST_CASE("non-integer doubles survive the round trip exactly") {
  const Plan plan = combining_alltoall();
  const std::string text = to_json_string(plan);
  CHECK(contains(text, "\"cutoff_ratio\": 0.7142857142857143"));
  CHECK(contains(text, "\"combining_us\": 7.915200000000001"));
  Result<Plan> back = plan_from_json_string(text);
  REQUIRE(back.ok());
  CHECK(*back->stats().cutoff_ratio == 0.7142857142857143);
  CHECK(back->stats().cost->combining_us == 7.915200000000001);
  CHECK(back->stats().cost->beta_us_per_byte == 0.0003);
}

TEST_CASE("canonical text of a direct alltoall") {
  const std::string expected = R"({
  "schema": "cartplan.plan/1",
  "op": "alltoall",
  "algorithm": "direct",
  "ndims": 2,
  "neighborhood": [
    [0, 0],
    [1, 0],
    [-1, 0],
    [0, 1],
    [0, -1]
  ],
  "dim_order": [0, 1],
  "temp_slots": [],
  "phases": [
    {
      "dim": -1,
      "rounds": [
        {
          "shift": [1, 0],
          "tag": 0,
          "send": [
            {"buf": "send", "block": 1}
          ],
          "recv": [
            {"buf": "recv", "block": 1}
          ]
        },
        {
          "shift": [-1, 0],
          "tag": 1,
          "send": [
            {"buf": "send", "block": 2}
          ],
          "recv": [
            {"buf": "recv", "block": 2}
          ]
        },
        {
          "shift": [0, 1],
          "tag": 2,
          "send": [
            {"buf": "send", "block": 3}
          ],
          "recv": [
            {"buf": "recv", "block": 3}
          ]
        },
        {
          "shift": [0, -1],
          "tag": 3,
          "send": [
            {"buf": "send", "block": 4}
          ],
          "recv": [
            {"buf": "recv", "block": 4}
          ]
        }
      ]
    }
  ],
  "copies": [
    {"from": {"buf": "send", "block": 0}, "to": {"buf": "recv", "block": 0}}
  ],
  "stats": {
    "t": 4,
    "rounds": 4,
    "volume": 4,
    "phase_rounds": [4],
    "cutoff_ratio": null,
    "cost": null,
    "predicted_us": null
  }
}
)";
  CHECK(to_json_string(direct_alltoall()) == expected);
}

TEST_CASE("canonical text puts temp slots, cost and predicted_us on one line each") {
  const std::string text = to_json_string(combining_alltoall());
  CHECK(contains(text, "  \"temp_slots\": [\n    {\"shape_of\": 0},\n    {\"shape_of\": 0}\n  ],\n"));
  CHECK(contains(text, "{\"buf\": \"temp\", \"slot\": 0}"));
  CHECK(contains(text,
                 "    \"cost\": {\"alpha_us\": 1.5, \"beta_us_per_byte\": 0.0003, \"block_bytes\": 4096, "
                 "\"combining_rounds\": 2, \"combining_volume\": 4, \"direct_us\": 8.1, "
                 "\"combining_us\": 7.915200000000001},\n"));
  CHECK(contains(text, "    \"predicted_us\": {\"direct\": 8.1, \"combining\": 7.915200000000001}\n"));
}

TEST_CASE("to_json keeps the contract's key order") {
  const nlohmann::ordered_json j = to_json(combining_alltoall());
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"schema", "op", "algorithm", "ndims", "neighborhood",
                                         "dim_order", "temp_slots", "phases", "copies", "stats"});
  std::vector<std::string> stats;
  for (const auto& [k, v] : j["stats"].items()) stats.push_back(k);
  CHECK(stats == std::vector<std::string>{"t", "rounds", "volume", "phase_rounds", "cutoff_ratio",
                                          "cost", "predicted_us"});
  CHECK(j["phases"][0]["dim"] == 1);
  CHECK(j["stats"]["predicted_us"]["direct"] == 8.1);
}

TEST_CASE("non-canonical but valid text parses and prints canonically") {
  const Plan plan = combining_allgather();
  const std::string compact = to_json(plan).dump();
  Result<Plan> back = plan_from_json_string(compact);
  REQUIRE(back.ok());
  CHECK(*back == plan);
  CHECK(to_json_string(*back) == to_json_string(plan));

  // Integral floats are integers to JSON; key order is free on input.
  json j = valid(plan);
  j["ndims"] = 3.0;
  j["phases"][0]["rounds"][0]["tag"] = 0.0;
  Result<Plan> again = plan_from_json(j);
  REQUIRE_MESSAGE(again.ok(), again.error());
  CHECK(*again == plan);
}

TEST_CASE("unknown fields are rejected with their path") {
  json j = valid(direct_alltoall());
  j["phases"][0]["rounds"][2]["foo"] = 1;
  check_error(error_of(j), "$.phases[0].rounds[2]", {"unknown field 'foo'"});

  j = valid(direct_alltoall());
  j["extra"] = true;
  check_error(error_of(j), "$", {"unknown field 'extra'"});

  j = valid(combining_alltoall());
  j["stats"]["cost"]["gamma"] = 1;
  check_error(error_of(j), "$.stats.cost", {"unknown field 'gamma'"});

  // A send reference addresses a block, never a slot.
  j = valid(direct_alltoall());
  j["phases"][0]["rounds"][0]["send"][0] = {{"buf", "send"}, {"slot", 1}};
  check_error(error_of(j), "$.phases[0].rounds[0].send[0]", {"unknown field 'slot'"});
}

TEST_CASE("missing fields are rejected") {
  json j = valid(direct_alltoall());
  j["phases"][0]["rounds"][1].erase("tag");
  check_error(error_of(j), "$.phases[0].rounds[1]", {"missing field 'tag'"});

  j = valid(direct_alltoall());
  j.erase("schema");
  check_error(error_of(j), "$", {"missing field 'schema'"});

  j = valid(combining_alltoall());
  j["stats"]["cost"].erase("block_bytes");
  check_error(error_of(j), "$.stats.cost", {"missing field 'block_bytes'"});

  j = valid(direct_alltoall());
  j["copies"][0]["to"].erase("buf");
  check_error(error_of(j), "$.copies[0].to", {"missing field 'buf'"});

  j = valid(direct_alltoall());
  j["stats"].erase("cutoff_ratio");  // may be null, but not absent
  check_error(error_of(j), "$.stats", {"missing field 'cutoff_ratio'"});
}

TEST_CASE("unknown enum values are rejected") {
  json j = valid(direct_alltoall());
  j["op"] = "scatter";
  CHECK(error_of(j) == "$.op: unknown value 'scatter' (expected alltoall or allgather; reduction and rooted ops "
                       "need schema cartplan.plan/2)");
  j["op"] = "sum";
  j["schema"] = "cartplan.plan/2";
  check_error(error_of(j), "$.op", {"unknown value 'sum'", "allreduce, reduce_scatter, bcast, gather, scatter or reduce"});

  j = valid(direct_alltoall());
  j["algorithm"] = "Direct";
  check_error(error_of(j), "$.algorithm", {"unknown value 'Direct'", "direct or combining"});

  j = valid(direct_alltoall());
  j["phases"][0]["rounds"][3]["recv"][0]["buf"] = "scratch";
  check_error(error_of(j), "$.phases[0].rounds[3].recv[0].buf",
              {"unknown value 'scratch'", "send, recv or temp"});
}

TEST_CASE("wrong types are rejected") {
  json j = valid(direct_alltoall());
  j["ndims"] = "2";
  CHECK(error_of(j) == "$.ndims: expected an integer, got string");

  j = valid(direct_alltoall());
  j["neighborhood"][1] = {{"x", 1}};
  check_error(error_of(j), "$.neighborhood[1]", {"expected an array, got object"});

  j = valid(direct_alltoall());
  j["phases"][0]["rounds"][0]["shift"][1] = nullptr;
  check_error(error_of(j), "$.phases[0].rounds[0].shift[1]", {"expected an integer, got null"});

  j = valid(direct_alltoall());
  j["stats"]["cutoff_ratio"] = "0.5";
  check_error(error_of(j), "$.stats.cutoff_ratio", {"expected a number, got string"});

  j = valid(direct_alltoall());
  j["op"] = 1;
  check_error(error_of(j), "$.op", {"expected a string, got integer"});

  j = valid(direct_alltoall());
  j["phases"][0]["rounds"][0]["tag"] = 2.5;
  check_error(error_of(j), "$.phases[0].rounds[0].tag", {"expected an integer", "2.5"});

  j = valid(direct_alltoall());
  j["copies"] = json::object();
  check_error(error_of(j), "$.copies", {"expected an array, got object"});
}

TEST_CASE("a non-object root is rejected") {
  check_error(error_of(json::array({1, 2})), "$", {"expected an object, got array"});
  check_error(error_of(std::string("\"plan\"")), "$", {"expected an object, got string"});
  check_error(error_of(std::string("null")), "$", {"expected an object, got null"});
}

TEST_CASE("a wrong schema is rejected") {
  json j = valid(direct_alltoall());
  j["schema"] = "cartplan.plan/4";
  CHECK(error_of(j) == "$.schema: unsupported schema 'cartplan.plan/4' (expected cartplan.plan/1, cartplan.plan/2 or "
                       "cartplan.plan/3)");
  j["schema"] = 1;
  check_error(error_of(j), "$.schema", {"expected a string"});
}

TEST_CASE("integers out of range are rejected") {
  json j = valid(direct_alltoall());
  j["phases"][0]["rounds"][0]["tag"] = 1e30;
  check_error(error_of(j), "$.phases[0].rounds[0].tag", {"1e+30", "out of range"});

  // The same from text, where 1e30 is parsed as a double.
  std::string text = to_json_string(direct_alltoall());
  const std::string tag = "\"tag\": 0,";
  text.replace(text.find(tag), tag.size(), "\"tag\": 1e30,");
  check_error(error_of(text), "$.phases[0].rounds[0].tag", {"out of range"});

  j = valid(direct_alltoall());
  j["phases"][0]["rounds"][0]["tag"] = -1;
  check_error(error_of(j), "$.phases[0].rounds[0].tag", {"-1 out of range [0, 2147483647]"});

  j = valid(direct_alltoall());
  j["phases"][0]["rounds"][1]["tag"] = 3000000000u;
  check_error(error_of(j), "$.phases[0].rounds[1].tag", {"3000000000 out of range"});

  j = valid(direct_alltoall());
  j["neighborhood"][2][0] = -3000000000LL;
  check_error(error_of(j), "$.neighborhood[2][0]", {"out of range"});

  j = valid(direct_alltoall());
  j["ndims"] = 17;
  check_error(error_of(j), "$.ndims", {"17 out of range [1, 16]"});
  j["ndims"] = 0;
  check_error(error_of(j), "$.ndims", {"0 out of range [1, 16]"});

  j = valid(direct_alltoall());
  j["stats"]["t"] = -4;
  check_error(error_of(j), "$.stats.t", {"out of range"});

  j = valid(direct_alltoall());
  j["stats"]["phase_rounds"][0] = -1;
  check_error(error_of(j), "$.stats.phase_rounds[0]", {"out of range"});

  j = valid(combining_alltoall());
  j["stats"]["cost"]["block_bytes"] = 18446744073709551615u;
  check_error(error_of(j), "$.stats.cost.block_bytes", {"out of range"});
}

TEST_CASE("block and slot indices must address existing buffers") {
  json j = valid(direct_alltoall());
  j["phases"][0]["rounds"][0]["recv"][0]["block"] = 5;
  check_error(error_of(j), "$.phases[0].rounds[0].recv[0].block",
              {"block 5 out of range", "neighborhood has 5 entries"});

  j = valid(direct_alltoall());
  j["phases"][0]["rounds"][1]["send"][0]["block"] = -1;
  check_error(error_of(j), "$.phases[0].rounds[1].send[0].block", {"block -1 out of range"});

  j = valid(combining_alltoall());
  j["phases"][1]["rounds"][0]["send"][0]["slot"] = 2;
  check_error(error_of(j), "$.phases[1].rounds[0].send[0].slot", {"slot 2 out of range", "2 temp slots"});

  j = valid(direct_alltoall());  // no temp slots at all
  j["copies"][0]["from"] = {{"buf", "temp"}, {"slot", 0}};
  check_error(error_of(j), "$.copies[0].from.slot", {"slot 0 out of range", "0 temp slots"});

  j = valid(combining_alltoall());
  j["temp_slots"][1]["shape_of"] = 3;
  check_error(error_of(j), "$.temp_slots[1].shape_of", {"block 3 out of range"});

  j = valid(direct_allgather());
  j["phases"][0]["rounds"][1]["send"][0]["block"] = 1;
  check_error(error_of(j), "$.phases[0].rounds[1].send[0].block",
              {"allgather send buffer has one block", "expected 0"});
}

TEST_CASE("coordinate vectors need exactly ndims entries") {
  json j = valid(direct_alltoall());
  j["phases"][0]["rounds"][2]["shift"] = {0, 1, 0};
  check_error(error_of(j), "$.phases[0].rounds[2].shift", {"expected 2 coordinates", "got 3"});

  j = valid(direct_alltoall());
  j["neighborhood"][4] = {1};
  check_error(error_of(j), "$.neighborhood[4]", {"expected 2 coordinates", "got 1"});
}

TEST_CASE("dim_order must be a permutation and phase dims in range") {
  json j = valid(combining_allgather());
  j["dim_order"] = {0, 2, 0};
  check_error(error_of(j), "$.dim_order[2]", {"appears twice", "permutation"});

  j["dim_order"] = {0, 1};
  check_error(error_of(j), "$.dim_order", {"permutation of 0..2", "got 2 entries"});

  j["dim_order"] = {0, 1, 3};
  check_error(error_of(j), "$.dim_order[2]", {"dimension 3 out of range"});

  j = valid(combining_allgather());
  j["phases"][1]["dim"] = 3;
  check_error(error_of(j), "$.phases[1].dim", {"dimension 3 out of range", "-1 or 0..2"});
  j["phases"][1]["dim"] = -2;
  check_error(error_of(j), "$.phases[1].dim", {"dimension -2 out of range"});
}

TEST_CASE("predicted_us must repeat cost") {
  json j = valid(combining_alltoall());
  j["stats"]["predicted_us"]["direct"] = 8.2;
  check_error(error_of(j), "$.stats.predicted_us.direct", {"8.2 does not match cost.direct_us 8.1"});

  j = valid(combining_alltoall());
  j["stats"]["predicted_us"] = nullptr;
  check_error(error_of(j), "$.stats.predicted_us", {"null but cost is set"});

  j = valid(direct_alltoall());
  j["stats"]["predicted_us"] = {{"direct", 1.0}, {"combining", 2.0}};
  check_error(error_of(j), "$.stats.predicted_us", {"must be null when cost is null"});

  j = valid(combining_alltoall());
  j["stats"]["predicted_us"]["total"] = 1.0;
  check_error(error_of(j), "$.stats.predicted_us", {"unknown field 'total'"});
}

TEST_CASE("syntax errors report the byte position") {
  // Byte 37 (counted from 1) is the 'x' that cannot start a value.
  check_syntax_error(error_of(std::string(R"({"schema": "cartplan.plan/1", "op": x})")),
                     {"at byte 37:", "syntax error"});
  check_syntax_error(error_of(std::string("")), {"syntax error"});
  check_syntax_error(error_of(std::string("{\"a\": 1} trailing")), {"syntax error"});
  check_syntax_error(error_of(std::string("{\"a\": [1, 2}")), {"syntax error"});
}

TEST_CASE("deep nesting is rejected before it can exhaust the stack") {
  const std::string deep = std::string(10000, '[') + std::string(10000, ']');
  std::string msg;
  CHECK_NOTHROW(msg = error_of(deep));
  check_syntax_error(msg, {"at byte 65:", "nesting deeper than 64"});

  // Unterminated deep input is rejected the same way.
  check_syntax_error(error_of(std::string(100000, '{')), {"at byte 65:", "nesting"});

  // 64 levels are allowed (and then fail as a plan), 65 are not.
  check_error(error_of(std::string(64, '[') + std::string(64, ']')), "$", {"expected an object"});
  check_syntax_error(error_of(std::string(65, '[') + std::string(65, ']')), {"nesting"});

  // Brackets inside strings do not count.
  std::string text = to_json_string(direct_alltoall());
  const std::string op = "\"alltoall\"";
  text.replace(text.find(op), op.size(), "\"" + std::string(1000, '[') + "\\\"{{\"");
  check_error(error_of(text), "$.op", {"unknown value '[[["});
}

TEST_CASE("duplicate keys are rejected instead of silently keeping one") {
  std::string text = to_json_string(direct_alltoall());
  const std::string tag = "\"tag\": 2,";
  text.replace(text.find(tag), tag.size(), "\"tag\": 2, \"tag\": -5,");
  check_error(error_of(text), "$.phases[0].rounds[2]", {"duplicate field 'tag'"});

  text = to_json_string(direct_alltoall());
  text.replace(text.find("\"ndims\": 2,"), 11, "\"ndims\": 2, \"ndims\": 2,");
  check_error(error_of(text), "$", {"duplicate field 'ndims'"});
}

TEST_CASE("size limits stop adversarial inputs") {
  json j = valid(direct_alltoall());
  j["neighborhood"] = json::array();
  j["neighborhood"].get_ref<json::array_t&>().resize((1 << 20) + 1);
  check_error(error_of(j), "$.neighborhood", {"1048577 entries exceed the limit of 1048576"});
}

TEST_CASE("no exception escapes, even for strings that are not UTF-8") {
  json j = valid(direct_alltoall());
  j["op"] = std::string("\xff\xfe scatter");
  std::string msg;
  CHECK_NOTHROW(msg = error_of(j));
  check_error(msg, "$.op", {"unknown value"});

  j = valid(direct_alltoall());
  j[std::string("bad\xc3")] = 1;
  CHECK_NOTHROW(msg = error_of(j));
  check_error(msg, "$", {"unknown field"});

  CHECK_NOTHROW(msg = error_of(std::string("{\"op\": \"\xff\"}")));
  check_syntax_error(msg, {});
}

}  // namespace
}  // namespace cartplan::ir

namespace cartplan::ir {
namespace {

TEST_CASE("schema 2: reductions print as cartplan.plan/2 and round-trip; reduce flags are strict") {
  PlanParts p;
  p.op = Op::kReduce;
  p.kind = PlanKind::kCombining;
  p.ndims = 1;
  p.neighborhood = {{1}, {0}};
  p.dim_order = {0};
  BufRef acc = recv(0);
  acc.reduce = true;
  p.phases = {Phase{0, {Round{{1}, 0, {send(0)}, {acc}}}, {Copy{send(0), acc}}}};
  p.stats.t = 1;
  p.stats.rounds = 1;
  p.stats.volume = 1;
  p.stats.phase_rounds = {1};
  const Plan plan(p);
  const std::string text = to_json_string(plan);
  CHECK(text.find("\"schema\": \"cartplan.plan/2\"") != std::string::npos);
  CHECK(text.find("{\"from\": {\"buf\": \"send\", \"block\": 0}, \"to\": {\"buf\": \"recv\", \"block\": 0, \"reduce\": true}}") !=
        std::string::npos);
  const Result<Plan> back = plan_from_json_string(text);
  REQUIRE_MESSAGE(back.ok(), (back.ok() ? "" : back.error()));
  CHECK(*back == plan);
  CHECK(to_json_string(*back) == text);

  json j = json::parse(text);
  j["phases"][0]["rounds"][0]["recv"][0]["reduce"] = false;
  CHECK(plan_from_json(j).error() ==
        "$.phases[0].rounds[0].recv[0].reduce: must be true when present (omit it for an overwrite)");
  j = json::parse(text);
  j["phases"][0]["rounds"][0]["send"][0]["reduce"] = true;
  CHECK(plan_from_json(j).error() ==
        "$.phases[0].rounds[0].send[0].reduce: only written entries (recv entries, copy targets) can reduce");
  j = json::parse(text);
  j["phases"][0]["rounds"][0]["recv"][0]["block"] = 1;
  CHECK(plan_from_json(j).error() == "$.phases[0].rounds[0].recv[0].block: reduce recv buffer has one block, got block 1 (expected 0)");
  j = json::parse(text);
  j["phases"][0].erase("copies");
  CHECK(plan_from_json(j).error() == "$.phases[0]: missing field 'copies'");
  j = json::parse(text);
  j["phases"][0]["copies"][0]["to"]["fold"] = 1;
  CHECK(plan_from_json(j).error() == "$.phases[0].copies[0].to: unknown field 'fold'");
  j = json::parse(text);
  j["schema"] = "cartplan.plan/1";
  CHECK(plan_from_json(j).error().rfind("$.op: unknown value 'reduce' (expected alltoall or allgather;", 0) == 0);
}

TEST_CASE("schema 2 files of alltoall/allgather plans are read and print canonically as schema 1") {
  PlanParts p;
  p.op = Op::kAllgather;
  p.kind = PlanKind::kDirect;
  p.ndims = 1;
  p.neighborhood = {{1}};
  p.dim_order = {0};
  p.phases = {Phase{Phase::kAllDims, {Round{{1}, 0, {send(0)}, {recv(0)}}}}};
  p.stats.t = 1;
  p.stats.rounds = 1;
  p.stats.volume = 1;
  p.stats.phase_rounds = {1};
  const std::string v1 = to_json_string(Plan(p));
  CHECK(v1.find("cartplan.plan/1") != std::string::npos);
  json j = json::parse(v1);
  j["schema"] = "cartplan.plan/2";
  j["phases"][0]["copies"] = json::array();
  const Result<Plan> back = plan_from_json(j);
  REQUIRE(back.ok());
  CHECK(to_json_string(*back) == v1);
}

}  // namespace
}  // namespace cartplan::ir

namespace cartplan::ir {
namespace {

// A hybrid alltoall on {(1,0), (1,1)}: (1,0) sent directly in the first phase, (1,1) combined.
PlanParts hybrid_alltoall_parts() {
  PlanParts p;
  p.op = Op::kAlltoall;
  p.kind = PlanKind::kHybrid;
  p.ndims = 2;
  p.neighborhood = {{1, 0}, {1, 1}};
  p.dim_order = {0, 1};
  p.temp_slots = {{1}};
  p.phases = {Phase{Phase::kAllDims, {Round{{1, 0}, 0, {send(0)}, {recv(0)}}, Round{{1, 0}, 1, {send(1)}, {temp(0)}}}},
              Phase{1, {Round{{0, 1}, 2, {temp(0)}, {recv(1)}}}}};
  p.stats = derived_stats(p);
  return p;
}

TEST_CASE("schema 3: log-round and hybrid plans name their kind and round-trip; older schemas cannot name them") {
  for (const PlanKind kind : {PlanKind::kLogRound, PlanKind::kHybrid}) {
    PlanParts p = hybrid_alltoall_parts();
    p.kind = kind;
    const Plan plan(p);
    CAPTURE(to_string(kind));
    CHECK(plan.algorithm() == Algorithm::kCombining);
    CHECK(min_schema_version(plan) == 3);
    const std::string text = to_json_string(plan);
    CHECK(text.find("\"schema\": \"cartplan.plan/3\"") != std::string::npos);
    CHECK(text.find(std::string("\"algorithm\": \"") + to_string(kind) + "\"") != std::string::npos);
    const Result<Plan> back = plan_from_json_string(text);
    REQUIRE_MESSAGE(back.ok(), (back.ok() ? "" : back.error()));
    CHECK(*back == plan);
    CHECK(back->kind() == kind);
    CHECK(to_json_string(*back) == text);

    json j = json::parse(text);
    j["schema"] = "cartplan.plan/2";
    CHECK(plan_from_json(j).error() == std::string("$.algorithm: unknown value '") + to_string(kind) +
                                           "' (expected direct or combining; log-round and hybrid plans need schema "
                                           "cartplan.plan/3)");
  }
  json j = json::parse(to_json_string(Plan(hybrid_alltoall_parts())));
  j["algorithm"] = "bruck";
  CHECK(plan_from_json(j).error() ==
        "$.algorithm: unknown value 'bruck' (expected direct, combining, log-round or hybrid)");
  j["algorithm"] = "Hybrid";
  CHECK(plan_from_json(j).error().rfind("$.algorithm: unknown value 'Hybrid'", 0) == 0);
}

TEST_CASE("schema 3 files of direct and combining plans print as the lowest version that holds them") {
  for (const Plan& plan : all_plans()) {
    const std::string text = to_json_string(plan);
    json j = json::parse(text);
    j["schema"] = "cartplan.plan/3";
    for (json& ph : j["phases"]) ph["copies"] = json::array();
    const Result<Plan> back = plan_from_json(j);
    REQUIRE_MESSAGE(back.ok(), (back.ok() ? "" : back.error()));
    CHECK(back->kind() == plan.kind());
    CHECK(to_json_string(*back) == text);
  }
}

TEST_CASE("an old file of a hybrid plan (schema 1, labelled combining) loads as combining and prints unchanged") {
  PlanParts p = hybrid_alltoall_parts();
  p.kind = PlanKind::kCombining;
  const std::string old = to_json_string(Plan(p));
  CHECK(old.find("\"schema\": \"cartplan.plan/1\"") != std::string::npos);
  CHECK(old.find("\"algorithm\": \"combining\"") != std::string::npos);
  const Result<Plan> back = plan_from_json_string(old);
  REQUIRE_MESSAGE(back.ok(), (back.ok() ? "" : back.error()));
  CHECK(back->kind() == PlanKind::kCombining);
  CHECK(to_json_string(*back) == old);
}

}  // namespace
}  // namespace cartplan::ir
