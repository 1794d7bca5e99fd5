// The command-line frame of `cartplan halo` and `cartplan graph` (subcommand.h).
#include "tools/subcommand.h"

#include <iostream>
#include <limits>

#include "ir/parse_number.h"

namespace cartplan::tools {

Result<SubOptions> parse_sub_options(const std::vector<std::string>& args, const std::set<std::string>& allowed,
                                     std::size_t max_positional) {
  SubOptions o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (!a.starts_with("--")) {
      if (o.positional.size() >= max_positional) return fail("unexpected argument '" + a + "'");
      o.positional.push_back(a);
      continue;
    }
    const std::size_t eq = a.find('=');
    const std::string key = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    if (!allowed.count(key)) return fail("unknown option '--" + key + "'");
    std::string value;
    if (eq != std::string::npos) {
      value = a.substr(eq + 1);
    } else {
      if (i + 1 >= args.size() || args[i + 1].starts_with("--")) return fail("option --" + key + " needs a value");
      value = args[++i];
    }
    if (!o.values.emplace(key, value).second) return fail("option --" + key + " given more than once");
  }
  return o;
}

int finish_subcommand(const std::string& prefix, const Result<int>& status) {
  if (!status) {
    std::cerr << "cartplan: " << prefix << ": " << status.error() << "\n";
    return kSubExitBadInput;
  }
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "cartplan: cannot write to standard output\n";
    return kSubExitBadInput;
  }
  return *status;
}

Result<engine::Placement> parse_node_placement(const std::string* ranks_per_node, const std::string* cyclic_nodes,
                                               bool has_dims) {
  if (ranks_per_node && cyclic_nodes)
    return fail("--ranks-per-node and --cyclic-nodes exclude each other (block or cyclic placement)");
  const char* name = ranks_per_node ? "--ranks-per-node" : "--cyclic-nodes";
  const std::string* text = ranks_per_node ? ranks_per_node : cyclic_nodes;
  if (!text) return engine::Placement{};
  if (!has_dims) return fail(std::string(name) + " needs --dims");
  Result<int> n = parse_int(*text, ranks_per_node ? 1 : 2, std::numeric_limits<int>::max());
  if (!n) return fail(std::string(name) + ": " + n.error());
  return ranks_per_node ? engine::Placement::block(*n) : engine::Placement::cyclic(*n);
}

}  // namespace cartplan::tools
