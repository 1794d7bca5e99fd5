// Parser of GRAPH specs: generator parameters (strict key=value lists) or an edge-list file.
#include "engine/graph/graph_spec.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/graph/edge_list.h"
#include "engine/graph/generators.h"
#include "ir/parse_number.h"
#include "ir/read_file.h"

namespace cartplan::engine::graph {
namespace {

using Params = std::map<std::string, std::string, std::less<>>;

Result<Params> parse_params(std::string_view text, const std::set<std::string>& allowed, const std::set<std::string>& required) {
  Params p;
  for (std::size_t start = 0; start <= text.size();) {
    std::size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view item = text.substr(start, end - start);
    start = end + 1;
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) return fail("'" + std::string(item) + "' is not KEY=VALUE");
    const std::string key(item.substr(0, eq));
    if (!allowed.count(key)) {
      std::string all;
      for (const std::string& k : allowed) all += (all.empty() ? "" : ", ") + k;
      return fail("unknown parameter '" + key + "' (expected " + all + ")");
    }
    if (!p.emplace(key, std::string(item.substr(eq + 1))).second) return fail("parameter '" + key + "' given twice");
    if (end == text.size()) break;
  }
  for (const std::string& k : required) {
    if (!p.count(k)) return fail("missing parameter '" + k + "'");
  }
  return p;
}

template <class T>
Result<T> named(const std::string& key, Result<T> r) {
  if (!r) return fail(key + ": " + r.error());
  return r;
}

Result<std::vector<int>> dims_of(const std::string& key, const std::string& text) {
  std::string commas = text;
  for (char& c : commas) {
    if (c == 'x') c = ',';
  }
  return named(key, parse_int_list(commas, 1, 1 << 20, 4));
}

Result<std::uint64_t> seed_of(const Params& p) {
  if (!p.count("seed")) return std::uint64_t{1};
  Result<std::int64_t> s = named("seed", parse_integer(p.at("seed"), 0, INT64_MAX));
  if (!s) return fail(s.error());
  return static_cast<std::uint64_t>(*s);
}

Result<ir::graph::Topology> random_spec(std::string_view body) {
  Result<Params> p = parse_params(body, {"p", "q", "seed"}, {"p", "q"});
  if (!p) return fail(p.error());
  Result<int> n = named("p", parse_int(p->at("p"), 1, ir::graph::kMaxGraphRanks));
  Result<double> q = named("q", parse_nonnegative_double(p->at("q")));
  Result<std::uint64_t> seed = seed_of(*p);
  if (!n) return fail(n.error());
  if (!q) return fail(q.error());
  if (!seed) return fail(seed.error());
  return erdos_renyi(*n, *q, *seed);
}

Result<ir::graph::Topology> moore_spec(std::string_view body) {
  Result<Params> p = parse_params(body, {"dims", "r", "holes", "seed", "periodic"}, {"dims", "r"});
  if (!p) return fail(p.error());
  Result<std::vector<int>> dims = dims_of("dims", p->at("dims"));
  Result<int> r = named("r", parse_int(p->at("r"), 1, 8));
  Result<double> holes = p->count("holes") ? named("holes", parse_nonnegative_double(p->at("holes"))) : Result<double>(0.0);
  Result<int> periodic = p->count("periodic") ? named("periodic", parse_int(p->at("periodic"), 0, 1)) : Result<int>(1);
  Result<std::uint64_t> seed = seed_of(*p);
  if (!dims) return fail(dims.error());
  if (!r) return fail(r.error());
  if (!holes) return fail(holes.error());
  if (!periodic) return fail(periodic.error());
  if (!seed) return fail(seed.error());
  return moore(*dims, *r, *periodic == 1, *holes, *seed);
}

Result<ir::graph::Topology> osu_spec(std::string_view body) {
  Result<Params> p = parse_params(body, {"p", "d", "r"}, {"p", "d", "r"});
  if (!p) return fail(p.error());
  Result<int> n = named("p", parse_int(p->at("p"), 1, ir::graph::kMaxGraphRanks));
  Result<int> d = named("d", parse_int(p->at("d"), 1, 4));
  Result<int> r = named("r", parse_int(p->at("r"), 1, 8));
  if (!n) return fail(n.error());
  if (!d) return fail(d.error());
  if (!r) return fail(r.error());
  return osu_neighborhood(*n, *d, *r);
}

Result<ir::graph::Topology> mesh_spec(std::string_view body) {
  Result<Params> p = parse_params(body, {"cells", "parts", "stencil"}, {"cells", "parts"});
  if (!p) return fail(p.error());
  Result<std::vector<int>> cells = dims_of("cells", p->at("cells"));
  Result<int> parts = named("parts", parse_int(p->at("parts"), 1, ir::graph::kMaxGraphRanks));
  if (!cells) return fail(cells.error());
  if (!parts) return fail(parts.error());
  const int full = cells->size() == 3 ? 27 : 9;
  Result<int> stencil = p->count("stencil") ? named("stencil", parse_int(p->at("stencil"), 1, 27)) : Result<int>(full);
  if (!stencil) return fail(stencil.error());
  return mesh_partition(*cells, *parts, *stencil);
}

}  // namespace

Result<ir::graph::Topology> parse_graph_spec(std::string_view spec) {
  const std::size_t colon = spec.find(':');
  if (colon == std::string_view::npos)
    return fail("graph '" + std::string(spec) + "': expected KIND:PARAMETERS (random, moore, osu, mesh or file)");
  const std::string_view kind = spec.substr(0, colon), body = spec.substr(colon + 1);
  Result<ir::graph::Topology> t = fail("");
  if (kind == "random") t = random_spec(body);
  else if (kind == "moore") t = moore_spec(body);
  else if (kind == "osu") t = osu_spec(body);
  else if (kind == "mesh") t = mesh_spec(body);
  else if (kind == "file") {
    Result<std::string> text = read_file_bounded(std::string(body));
    if (!text) return fail(text.error());
    t = parse_edge_list(*text);
    if (!t) return fail("'" + std::string(body) + "', " + t.error());
    return t;
  } else {
    return fail("graph '" + std::string(spec) + "': unknown kind '" + std::string(kind) + "' (expected random, moore, osu, mesh or file)");
  }
  if (!t) return fail("graph '" + std::string(spec) + "': " + t.error());
  return t;
}

}  // namespace cartplan::engine::graph
