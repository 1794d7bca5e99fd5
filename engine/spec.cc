// The stencil SPEC parser (kind:key=value,..., offsets:..., @file.json) with strict, named errors.
#include "engine/spec.h"

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "engine/stencils.h"
#include "ir/parse_number.h"
#include "ir/read_file.h"

namespace cartplan::engine {

using cartplan::ReadOptions;

namespace {

using nlohmann::json;


std::string in_quotes(std::string_view s) { return "'" + std::string(s) + "'"; }

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      parts.push_back(s.substr(start));
      return parts;
    }
    parts.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

struct Param {
  const char* name;
  std::optional<int> default_value;  // nullopt: required
};

struct Kind {
  const char* name;
  std::vector<Param> params;
};

const std::vector<Kind>& kinds() {
  static const std::vector<Kind> k = {
      {"moore", {{"d", {}}, {"r", {}}}},
      {"vonneumann", {{"d", {}}, {"r", {}}}},
      {"box", {{"d", {}}, {"n", {}}, {"f", {}}}},
      {"chebyshev", {{"d", {}}, {"depth", {}}, {"shadow", 0}}},
      {"manhattan", {{"d", {}}, {"depth", {}}, {"shadow", 0}}},
  };
  return k;
}

Result<Neighborhood> parse_kind(const Kind& kind, std::string_view rest) {
  const std::string prefix = std::string(kind.name) + ": ";
  std::string expected;
  for (const Param& p : kind.params) expected += (expected.empty() ? "" : ", ") + std::string(p.name);

  std::vector<std::optional<int>> values(kind.params.size());
  if (!rest.empty()) {
    for (std::string_view item : split(rest, ',')) {
      if (item.empty()) return fail(prefix + "empty parameter in " + in_quotes(rest));
      const std::size_t eq = item.find('=');
      const std::string_view name = item.substr(0, eq);
      std::size_t idx = 0;
      while (idx < kind.params.size() && name != kind.params[idx].name) ++idx;
      if (idx == kind.params.size())
        return fail(prefix + "unknown parameter " + in_quotes(name) + " (expected " + expected + ")");
      if (eq == std::string_view::npos)
        return fail(prefix + "parameter " + in_quotes(name) + " has no value (expected " +
                    std::string(name) + "=VALUE)");
      if (values[idx]) return fail(prefix + "duplicate parameter " + in_quotes(name));
      const std::string_view text = item.substr(eq + 1);
      Result<int> v = parse_int(text);
      if (!v) return fail(prefix + std::string(name) + " = " + v.error());
      values[idx] = *v;
    }
  }
  std::vector<int> args;
  for (std::size_t i = 0; i < kind.params.size(); ++i) {
    if (!values[i]) values[i] = kind.params[i].default_value;
    if (!values[i]) return fail(prefix + "missing parameter " + in_quotes(kind.params[i].name));
    args.push_back(*values[i]);
  }
  const std::string_view k = kind.name;
  if (k == "moore") return stencils::moore(args[0], args[1]);
  if (k == "vonneumann") return stencils::vonneumann(args[0], args[1]);
  if (k == "box") return stencils::box(args[0], args[1], args[2]);
  if (k == "chebyshev") return stencils::chebyshev(args[0], args[1], args[2]);
  return stencils::manhattan(args[0], args[1], args[2]);
}

// offsets:1,0;-1,0;0,1 — ndims comes from the first offset; Neighborhood::create checks the rest.
Result<Neighborhood> parse_offsets(std::string_view rest) {
  const std::string prefix = "offsets: ";
  if (rest.empty()) return fail(prefix + "no offsets given (expected e.g. offsets:1,0;-1,0)");
  std::vector<Offset> offsets;
  std::size_t start = 0;
  while (start <= rest.size()) {
    // Stop before parsing more than the limit allows, so a giant spec cannot eat memory.
    if (offsets.size() == static_cast<std::size_t>(Neighborhood::kMaxOffsets))
      return fail(prefix + "more than " + std::to_string(Neighborhood::kMaxOffsets) + " offsets");
    std::size_t end = rest.find(';', start);
    if (end == std::string_view::npos) end = rest.size();
    const std::string_view item = rest.substr(start, end - start);
    const std::size_t i = offsets.size();
    if (item.empty()) return fail(prefix + "offset " + std::to_string(i) + " is empty");
    Offset o;
    for (std::string_view c : split(item, ',')) {
      Result<int> v = parse_int(c);
      if (!v)
        return fail(prefix + "offset " + std::to_string(i) + " coordinate " + std::to_string(o.size()) +
                    " = " + v.error());
      o.push_back(*v);
      if (o.size() > static_cast<std::size_t>(Neighborhood::kMaxDims))
        return fail(prefix + "offset " + std::to_string(i) + " has more than " +
                    std::to_string(Neighborhood::kMaxDims) + " coordinates");
    }
    offsets.push_back(std::move(o));
    start = end + 1;
  }
  const int ndims = static_cast<int>(offsets[0].size());
  auto n = Neighborhood::create(ndims, std::move(offsets));
  if (!n) return fail(prefix + n.error());
  return n;
}

// nlohmann's messages start with "[json.exception.parse_error.101] "; the position follows.
std::string strip_json_prefix(const std::string& what) {
  if (!what.empty() && what[0] == '[') {
    const std::size_t close = what.find("] ");
    if (close != std::string::npos) return what.substr(close + 2);
  }
  return what;
}

Result<Neighborhood> parse_file(std::string_view spec) {
  const std::string shown(spec);
  const std::string path(spec.substr(1));
  if (path.empty()) return fail("'@': missing file name after '@' (expected @file.json)");
  ReadOptions read;
  read.shown = shown;
  auto text = read_file_bounded(path, read);
  if (!text) return fail(text.error());
  json j;
  try {
    j = json::parse(*text);
  } catch (const json::exception& e) {
    return fail(in_quotes(shown) + ": invalid JSON: " + strip_json_prefix(e.what()));
  }
  auto n = neighborhood_from_json(j);
  if (!n) return fail(in_quotes(shown) + ": " + n.error());
  return n;
}

// A short rendering of a JSON value for error messages. Containers are not dumped: dump()
// recurses, and a deeply nested file must not overflow the stack.
std::string show(const json& v) {
  if (v.is_structured()) return v.is_array() ? "[...]" : "{...}";
  std::string s = v.dump();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

Result<int> json_int(const json& v, const std::string& what, long long lo, long long hi) {
  if (!v.is_number_integer())
    return fail(what + " must be an integer, got " + std::string(v.type_name()) + " " + show(v));
  // Unsigned values above INT64_MAX would wrap in get<int64_t>; read them as unsigned.
  if (v.is_number_unsigned() ? v.get<std::uint64_t>() > static_cast<std::uint64_t>(hi)
                             : (v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi))
    return fail(what + " = " + show(v) + " is out of range [" + std::to_string(lo) + ", " +
                std::to_string(hi) + "]");
  return static_cast<int>(v.get<std::int64_t>());
}

Result<Neighborhood> from_json_unchecked(const json& j) {
  const json* offsets_j = nullptr;
  std::optional<int> ndims;
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      if (it.key() != "ndims" && it.key() != "offsets")
        return fail("unknown field " + in_quotes(it.key()) + " (expected ndims, offsets)");
    if (!j.contains("ndims")) return fail("missing field 'ndims'");
    if (!j.contains("offsets")) return fail("missing field 'offsets'");
    auto d = json_int(j.at("ndims"), "'ndims'", INT_MIN, INT_MAX);
    if (!d) return fail(d.error());
    ndims = *d;
    offsets_j = &j.at("offsets");
    if (!offsets_j->is_array())
      return fail("'offsets' must be an array of offsets, got " + std::string(offsets_j->type_name()));
  } else if (j.is_array()) {
    offsets_j = &j;
  } else {
    return fail(std::string("expected {\"ndims\": D, \"offsets\": [[...], ...]} or [[...], ...], got ") +
                j.type_name());
  }
  const json& arr = *offsets_j;
  if (arr.size() > static_cast<std::size_t>(Neighborhood::kMaxOffsets))
    return fail("a neighbourhood has at most " + std::to_string(Neighborhood::kMaxOffsets) +
                " offsets, got " + std::to_string(arr.size()));
  std::vector<Offset> offsets;
  offsets.reserve(arr.size());
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const json& o = arr[i];
    const std::string where = "offsets[" + std::to_string(i) + "]";
    if (!o.is_array())
      return fail(where + " must be an array of integers, got " + std::string(o.type_name()));
    if (o.size() > static_cast<std::size_t>(Neighborhood::kMaxDims))
      return fail(where + " has " + std::to_string(o.size()) + " coordinates, more than " +
                  std::to_string(Neighborhood::kMaxDims));
    Offset off;
    for (std::size_t k = 0; k < o.size(); ++k) {
      auto c = json_int(o[k], where + "[" + std::to_string(k) + "]", -Neighborhood::kMaxCoordinate,
                        Neighborhood::kMaxCoordinate);
      if (!c) return fail(c.error());
      off.push_back(*c);
    }
    offsets.push_back(std::move(off));
  }
  // The bare-array form takes ndims from the first offset, like offsets:... specs.
  if (!ndims) {
    if (offsets.empty()) return fail("a neighbourhood needs at least one offset");
    ndims = static_cast<int>(offsets[0].size());
  }
  return Neighborhood::create(*ndims, std::move(offsets));
}

}  // namespace

Result<Neighborhood> neighborhood_from_json(const json& j) {
  // The checks above should make every access safe; the catch keeps that a promise, not a hope.
  try {
    return from_json_unchecked(j);
  } catch (const std::exception& e) {
    return fail(std::string("invalid neighbourhood JSON: ") + strip_json_prefix(e.what()));
  }
}

Result<Neighborhood> parse_spec(std::string_view spec) {
  if (spec.empty()) return fail("empty stencil spec (expected e.g. moore:d=2,r=1)");
  try {
    if (spec[0] == '@') return parse_file(spec);
    const std::size_t colon = spec.find(':');
    const std::string_view kind = spec.substr(0, colon);
    const std::string_view rest = colon == std::string_view::npos ? "" : spec.substr(colon + 1);
    if (kind == "offsets") return parse_offsets(rest);
    for (const Kind& k : kinds())
      if (kind == k.name) return parse_kind(k, rest);
    return fail("unknown stencil kind " + in_quotes(kind) +
                " (expected moore, vonneumann, box, chebyshev, manhattan, offsets or @file.json)");
  } catch (const std::exception& e) {
    // Only allocation failure can get here; report it rather than escape the library.
    return fail("cannot parse stencil spec: " + std::string(e.what()));
  }
}

}  // namespace cartplan::engine
