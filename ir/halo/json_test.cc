// Tests of the halo plan JSON: canonical round trips and the strict reader's errors.
#include "ir/halo/json.h"

#include <doctest/doctest.h>

#include "ir/halo/test_plans.h"

namespace cartplan::ir::halo {
namespace {

std::string error_of(const std::string& text) {
  Result<HaloPlan> r = halo_plan_from_json_string(text);
  REQUIRE_FALSE(r);
  return r.error();
}

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  const std::size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("print -> parse -> print is identical, and the plan equal") {
  for (const HaloPlan& plan : {test_plans::line_direct(), test_plans::moore2_dimwise(), test_plans::moore2_with_temp()}) {
    const std::string text = to_json_string(plan);
    Result<HaloPlan> back = halo_plan_from_json_string(text);
    REQUIRE(back);
    CHECK(*back == plan);
    CHECK(to_json_string(*back) == text);
  }
}

TEST_CASE("the text is readable: one line per part") {
  const std::string text = to_json_string(test_plans::line_direct());
  CHECK(text.find("\"schema\": \"cartplan.halo_plan/1\"") != std::string::npos);
  CHECK(text.find("{\"from\": {\"buf\": \"array\", \"lo\": [3]}, \"to\": {\"buf\": \"array\", \"lo\": [-1]}, \"extent\": [1]}") != std::string::npos);
}

TEST_CASE("the reader names the JSON path of what is wrong") {
  const std::string good = to_json_string(test_plans::moore2_with_temp());
  CHECK(error_of(replaced(good, "\"dim_order\"", "\"dims_order\"")).find("$: unknown field 'dims_order'") == 0);
  CHECK(error_of(replaced(good, "\"split\"", "\"fastest\"")) == "$.algorithm: unknown value \"fastest\" (expected direct, combining, dimwise, split, hybrid)");
  CHECK(error_of(replaced(good, "\"order\": \"C\"", "\"order\": \"F\"")).find("$.array.order: unknown value \"F\"") == 0);
  CHECK(error_of(replaced(good, "\"slot\": 0", "\"slot\": 1")).find(".slot: 1 is out of range [0, 0]") != std::string::npos);
  CHECK(error_of(replaced(good, "\"buf\": \"temp\"", "\"buf\": \"ghost\"")).find("unknown value \"ghost\" (expected array, temp)") != std::string::npos);
  CHECK(error_of(replaced(good, "\"tag\": 0", "\"tag\": -1")) == "$.phases[0].messages[0].tag: -1 is out of range [0, 1073741824]");
  CHECK(error_of(replaced(good, "\"shift\": [-1, 0]", "\"shift\": [-1]")) == "$.phases[0].messages[0].shift: expected 2 integers, got 1");
  CHECK(error_of(replaced(good, "cartplan.halo_plan/1", "cartplan.halo_plan/2")).find("$.schema: expected") == 0);
  CHECK(error_of(replaced(good, "\"interior\": [3, 4]", "\"interior\": [3, 0]")) == "$.array.interior[1]: 0 is out of range [1, 268435456]");
  CHECK(error_of(replaced(good, "\"tag\": 0", "\"tag\": 0, \"tag\": 1")) == "$.phases[0].messages[0]: duplicate field 'tag'");
  CHECK(error_of("{").find("invalid JSON at byte ") == 0);
  CHECK(error_of(std::string(40, '[')).find("nesting deeper than 32 levels") != std::string::npos);
  CHECK(error_of(replaced(good, "\"to\": {\"buf\": \"array\", \"lo\": [0, 4]}", "\"to\": {\"buf\": \"array\", \"slot\": 0, \"lo\": [0, 4]}"))
            .find(".to.slot: only temps have a slot") != std::string::npos);
}

}  // namespace cartplan::ir::halo
