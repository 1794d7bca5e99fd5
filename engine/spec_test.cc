// Tests for the SPEC parser: every kind, offsets lists, JSON files, and the invalid-spec corpus.
#include "engine/spec.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "engine/stencils.h"

namespace cartplan::engine {
namespace {

std::string error_of(std::string_view spec) {
  auto n = parse_spec(spec);
  REQUIRE_MESSAGE(!n.ok(), "spec unexpectedly valid: ", std::string(spec));
  return n.error();
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A file in the test's private temp dir (Bazel sets TEST_TMPDIR).
std::string write_temp(const std::string& name, const std::string& content) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(dir ? dir : "/tmp") + "/" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

std::string json_error(const std::string& name, const std::string& content) {
  return error_of("@" + write_temp(name, content));
}

TEST_CASE("every kind parses to the generator's neighbourhood") {
  auto m = parse_spec("moore:d=2,r=1");
  REQUIRE(m.ok());
  CHECK(m->offsets() == stencils::moore(2, 1)->offsets());
  CHECK(m->size() == 9);

  auto v = parse_spec("vonneumann:r=2,d=2");  // parameter order is free
  REQUIRE(v.ok());
  CHECK(v->size() == 13);

  auto b = parse_spec("box:d=3,n=3,f=-1");
  REQUIRE(b.ok());
  CHECK(b->offsets() == stencils::box(3, 3, -1)->offsets());
  CHECK(b->nonzero_count() == 26);

  auto b2 = parse_spec("box:d=2,n=+4,f=-1");  // explicit plus sign
  REQUIRE(b2.ok());
  CHECK(b2->size() == 16);

  auto c = parse_spec("chebyshev:d=2,depth=1,shadow=1");
  REQUIRE(c.ok());
  CHECK(c->size() == 8);
  auto c0 = parse_spec("chebyshev:d=2,depth=1");  // shadow defaults to 0
  REQUIRE(c0.ok());
  CHECK(c0->size() == 9);

  auto h = parse_spec("manhattan:d=2,depth=1,shadow=1");
  REQUIRE(h.ok());
  CHECK(h->offsets() == std::vector<Offset>{{-1, 0}, {0, -1}, {0, 1}, {1, 0}});
  auto h0 = parse_spec("manhattan:depth=2,d=3");
  REQUIRE(h0.ok());
  CHECK(h0->offsets() == stencils::manhattan(3, 2, 0)->offsets());
}

TEST_CASE("offsets: lists keep order, duplicates and zero") {
  auto n = parse_spec("offsets:1,0;-1,0;0,1");
  REQUIRE(n.ok());
  CHECK(n->ndims() == 2);
  CHECK(n->offsets() == std::vector<Offset>{{1, 0}, {-1, 0}, {0, 1}});

  auto d = parse_spec("offsets:0,0,0;+2,-3,0;2,-3,0");
  REQUIRE(d.ok());
  CHECK(d->ndims() == 3);
  CHECK(d->size() == 3);
  CHECK(d->nonzero_count() == 2);
  CHECK((*d)[1] == Offset{2, -3, 0});

  auto one = parse_spec("offsets:-268435456");
  REQUIRE(one.ok());
  CHECK((*one)[0] == Offset{-268435456});
}

TEST_CASE("spec errors assert the message text") {
  CHECK(error_of("") == "empty stencil spec (expected e.g. moore:d=2,r=1)");
  CHECK(error_of("mooore:d=2,r=1") ==
        "unknown stencil kind 'mooore' (expected moore, vonneumann, box, chebyshev, manhattan, "
        "offsets or @file.json)");
  CHECK(error_of("moore:d=2") == "moore: missing parameter 'r'");
  CHECK(error_of("box:d=2,n=3,f=0,x=1") == "box: unknown parameter 'x' (expected d, n, f)");
  CHECK(error_of("moore:d=2,r=1,r=2") == "moore: duplicate parameter 'r'");
  CHECK(error_of("moore:d=2,r=abc") == "moore: r = 'abc' is not an integer");
  CHECK(error_of("moore:d=2,r=1e3") == "moore: r = '1e3' is not an integer");
  CHECK(error_of("moore:d=2,r=0x10") == "moore: r = '0x10' is not an integer");
  CHECK(error_of("moore:d=2,r=-") == "moore: r = '-' is not an integer");
  CHECK(error_of("moore:d=2,r=2147483648") == "moore: r = '2147483648' is out of range [-2147483648, 2147483647]");
  CHECK(error_of("moore:d=2,r=-2147483648") == "moore:d=2,r=-2147483648: r must be non-negative");
  CHECK(error_of("box:d=1,n=1,f=-2147483648") ==
        "box:d=1,n=1,f=-2147483648 has coordinates up to 2147483648, more than the limit 268435456");
  CHECK(error_of("moore:d=2,r=100000000000000000000000000") ==
        "moore: r = '100000000000000000000000000' is out of range [-2147483648, 2147483647]");
  CHECK(error_of("moore:d=2,r") == "moore: parameter 'r' has no value (expected r=VALUE)");
  CHECK(error_of("moore:d=12,r=3") ==
        "moore:d=12,r=3 would have 13841287201 offsets, more than the limit 1048576");
  CHECK(error_of("offsets:1,0;-1") == "offsets: offset 1 has 1 coordinates, expected 2");
  CHECK(error_of("offsets:1,0;x,1") == "offsets: offset 1 coordinate 0 = 'x' is not an integer");
  CHECK(error_of("@/nonexistent/x.json") ==
        "cannot read '@/nonexistent/x.json': No such file or directory");
}

TEST_CASE("@file.json: object and bare-array forms") {
  auto obj = parse_spec("@" + write_temp("obj.json", R"({"ndims": 2, "offsets": [[1, 0], [0, -1], [0, 0]]})"));
  REQUIRE(obj.ok());
  CHECK(obj->ndims() == 2);
  CHECK(obj->offsets() == std::vector<Offset>{{1, 0}, {0, -1}, {0, 0}});

  auto arr = parse_spec("@" + write_temp("arr.json", "[[1,0,0],\n [0,0,-268435456]]\n"));
  REQUIRE(arr.ok());
  CHECK(arr->ndims() == 3);
  CHECK(arr->size() == 2);

  // Large integers written as unsigned by nlohmann still convert when they fit.
  auto j = nlohmann::json::parse(R"({"offsets": [[3]], "ndims": 1})");
  auto direct = neighborhood_from_json(j);
  REQUIRE(direct.ok());
  CHECK((*direct)[0] == Offset{3});
}

TEST_CASE("@file.json errors name the file, the field and the position") {
  CHECK(json_error("extra.json", R"({"ndims": 2, "offsets": [[1, 0]], "name": "x"})") ==
        "'@" + write_temp("extra.json", R"({"ndims": 2, "offsets": [[1, 0]], "name": "x"})") +
            "': unknown field 'name' (expected ndims, offsets)");
  CHECK(has(json_error("nstr.json", R"({"ndims": "2", "offsets": [[1, 0]]})"),
            "'ndims' must be an integer, got string \"2\""));
  CHECK(has(json_error("nfloat.json", R"({"ndims": 2.0, "offsets": [[1, 0]]})"),
            "'ndims' must be an integer, got number 2.0"));
  CHECK(has(json_error("noff.json", R"({"ndims": 2})"), "missing field 'offsets'"));
  CHECK(has(json_error("nnd.json", R"({"offsets": [[1]]})"), "missing field 'ndims'"));
  CHECK(has(json_error("offobj.json", R"({"ndims": 2, "offsets": {"a": 1}})"),
            "'offsets' must be an array of offsets, got object"));
  CHECK(has(json_error("flat.json", "[1, 2]"), "offsets[0] must be an array of integers, got number"));
  CHECK(has(json_error("frac.json", "[[1, 0.5]]"), "offsets[0][1] must be an integer, got number 0.5"));
  CHECK(has(json_error("null.json", "[[1, null]]"), "offsets[0][1] must be an integer, got null"));
  CHECK(has(json_error("len.json", R"({"ndims": 2, "offsets": [[1, 0], [1]]})"),
            "offset 1 has 1 coordinates, expected 2"));
  CHECK(has(json_error("ndims0.json", R"({"ndims": 0, "offsets": [[]]})"),
            "ndims = 0: a neighbourhood needs between 1 and 16 dimensions"));
  CHECK(has(json_error("ndbig.json", R"({"ndims": 99999999999, "offsets": [[1]]})"),
            "'ndims' = 99999999999 is out of range"));
  CHECK(has(json_error("empty_arr.json", "[]"), "a neighbourhood needs at least one offset"));
  CHECK(has(json_error("empty_off.json", R"({"ndims": 2, "offsets": []})"),
            "a neighbourhood needs at least one offset"));
  CHECK(has(json_error("scalar.json", "42"), "got number"));
  CHECK(has(json_error("u64.json", "[[18446744073709551615]]"),
            "offsets[0][0] = 18446744073709551615 is out of range [-268435456, 268435456]"));
  CHECK(has(json_error("i64.json", "[[-9223372036854775808]]"), "is out of range"));
  CHECK(has(json_error("coord.json", "[[268435457]]"), "offsets[0][0] = 268435457 is out of range"));
}

TEST_CASE("@file.json: invalid JSON reports the position; nothing crashes") {
  const std::string e1 = json_error("trunc.json", R"({"ndims": 2, "offsets": [[1, 0])");
  CHECK(has(e1, "': invalid JSON: parse error at line 1, column 32: syntax error while parsing "
                "array - unexpected end of input; expected ']'"));
  const std::string e2 = json_error("lines.json", "{\n  \"ndims\": 2,\n  \"offsets\": [[1, 0],, [0, 1]]\n}");
  CHECK(has(e2, "invalid JSON: parse error at line 3"));
  CHECK(has(json_error("empty.json", ""), "invalid JSON: parse error at line 1, column 1"));
  CHECK(has(json_error("trailing.json", "[[1]] x"), "invalid JSON"));
  CHECK(has(json_error("binary.json", std::string("\0\xff\x01[", 4)), "invalid JSON"));
  CHECK(has(json_error("comment.json", "// c\n[[1]]"), "invalid JSON"));

  // Deep nesting must neither overflow the stack nor be accepted.
  const std::string deep(200000, '[');
  CHECK(has(json_error("deep_open.json", deep), "invalid JSON"));
  CHECK(has(json_error("deep_closed.json", deep + std::string(200000, ']')),
            "offsets[0][0] must be an integer, got array"));
}

// Each corpus line is SPEC<TAB>expected error substring; '#' lines are comments.
TEST_CASE("invalid-spec corpus: tests/corpus/specs.txt") {
  std::ifstream in("tests/corpus/specs.txt");
  REQUIRE_MESSAGE(in.good(), "cannot open tests/corpus/specs.txt from the runfiles directory");
  std::string line;
  int cases = 0;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    const std::size_t tab = line.find('\t');
    REQUIRE_MESSAGE(tab != std::string::npos, "corpus line ", line_no, " has no tab");
    const std::string spec = line.substr(0, tab);
    const std::string want = line.substr(tab + 1);
    CAPTURE(line_no);
    CAPTURE(spec);
    auto n = parse_spec(spec);
    REQUIRE_FALSE(n.ok());
    CHECK_MESSAGE(has(n.error(), want), "got: ", n.error(), "\nwant substring: ", want);
    ++cases;
  }
  CHECK(cases >= 25);
}

}  // namespace
}  // namespace cartplan::engine
