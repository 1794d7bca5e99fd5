// Golden plans: `cartplan plan` must print exactly the committed JSON for each MANIFEST entry,
// and every golden file must parse, verify and print back unchanged.
#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "ir/json.h"
#include "ir/verify.h"

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string run(const std::string& args) {
  // Arguments contain ';' (offset lists): quote each one for the shell.
  std::string cmd = "tools/cartplan plan";
  std::istringstream words(args);
  for (std::string w; words >> w;) cmd += " '" + w + "'";
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  std::array<char, 4096> buf{};
  for (std::size_t n; (n = fread(buf.data(), 1, buf.size(), pipe)) > 0;) out.append(buf.data(), n);
  CHECK(pclose(pipe) == 0);
  return out;
}

TEST_CASE("golden plans match the planner and round-trip") {
  std::istringstream manifest(read_file("tests/golden/MANIFEST"));
  int checked = 0;
  for (std::string line; std::getline(manifest, line);) {
    if (line.empty() || line[0] == '#') continue;
    const std::size_t tab = line.find('\t');
    REQUIRE(tab != std::string::npos);
    const std::string name = line.substr(0, tab);
    CAPTURE(name);
    const std::string golden = read_file("tests/golden/" + name + ".json");
    CHECK_MESSAGE(run(line.substr(tab + 1)) == golden,
                  "plan differs from tests/golden/" << name << ".json (tests/golden/regenerate.sh rewrites it)");
    const cartplan::Result<cartplan::ir::Plan> plan = cartplan::ir::plan_from_json_string(golden);
    REQUIRE_MESSAGE(plan.ok(), (plan.ok() ? "" : plan.error()));
    CHECK(cartplan::ir::verify(*plan).empty());
    CHECK(cartplan::ir::to_json_string(*plan) == golden);
    ++checked;
  }
  CHECK(checked == 9);
}

}  // namespace
