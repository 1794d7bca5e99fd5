// The command-line frame shared by `cartplan halo` and `cartplan graph`: options given as
// "--name value" or "--name=value", each at most once, and positional arguments; then the
// subcommand's outcome turned into an exit status (errors on stderr, prefixed by the command).
//
//   Result<SubOptions> o = parse_sub_options(args, {"op", "graph"}, /*max_positional=*/0);
//   return finish_subcommand("graph plan", o ? cmd_plan(*o) : Result<int>(fail(o.error())));
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "engine/placement.h"
#include "ir/read_file.h"
#include "ir/result.h"

namespace cartplan::tools {

inline constexpr int kSubExitBadInput = 2;  // the exit status of bad input

struct SubOptions {
  std::map<std::string, std::string> values;
  std::vector<std::string> positional;
  // The value of --name, or nullptr.
  const std::string* get(const std::string& name) const {
    auto it = values.find(name);
    return it == values.end() ? nullptr : &it->second;
  }
};

// Errors name the option: unknown ones, a missing value, one given twice, a positional
// argument beyond `max_positional`. A following "--x" is never taken as a value.
Result<SubOptions> parse_sub_options(const std::vector<std::string>& args, const std::set<std::string>& allowed,
                                     std::size_t max_positional);

// `status`'s value, or kSubExitBadInput with "cartplan: PREFIX: ERROR" on stderr; also
// kSubExitBadInput if standard output could not be written.
int finish_subcommand(const std::string& prefix, const Result<int>& status);

// The node placement the plan commands price with, from the values of --ranks-per-node R (block:
// R consecutive ranks share a node) and --cyclic-nodes N (cyclic: rank r on node r mod N, N >= 2),
// nullptr where not given: at most one of them, and only with a grid (`has_dims`). Neither:
// unknown placement (every rank on one node, no placement counts).
Result<engine::Placement> parse_node_placement(const std::string* ranks_per_node, const std::string* cyclic_nodes,
                                               bool has_dims);

// A plan file ("-": standard input), read with read_file_bounded's size limit and parsed by
// `parse` (halo_plan_from_json_string, graph_plan_from_json_string); errors name the file.
template <class Plan>
Result<Plan> read_plan_file(const std::string& path, Result<Plan> (*parse)(std::string_view)) {
  ReadOptions ro;
  ro.dash_is_stdin = true;
  Result<std::string> text = read_file_bounded(path, ro);
  if (!text) return fail(text.error());
  Result<Plan> plan = parse(*text);
  if (!plan) return fail("'" + path + "': " + plan.error());
  return plan;
}

}  // namespace cartplan::tools
