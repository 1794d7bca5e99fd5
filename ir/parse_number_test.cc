// Tests of the strict number parser: signs, spaces, overflow, empty text, garbage, hex/octal.
#include "ir/parse_number.h"

#include <cstdint>
#include <limits>

#include <doctest/doctest.h>

namespace cartplan {
namespace {

constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

template <class T>
std::string error_of(const Result<T>& r) {
  return r ? std::string("(ok)") : r.error();
}

TEST_CASE("integers: plain values and signs") {
  CHECK(*parse_integer("0", kMin, kMax) == 0);
  CHECK(*parse_integer("42", kMin, kMax) == 42);
  CHECK(*parse_integer("-42", kMin, kMax) == -42);
  CHECK(*parse_integer("+42", kMin, kMax) == 42);
  CHECK(*parse_integer("-0", 0, 10) == 0);
  CHECK(error_of(parse_integer("+-1", kMin, kMax)) == "'+-1' is not an integer");
  CHECK(error_of(parse_integer("--1", kMin, kMax)) == "'--1' is not an integer");
  CHECK(error_of(parse_integer("-", kMin, kMax)) == "'-' is not an integer");
  CHECK(error_of(parse_integer("+", kMin, kMax)) == "'+' is not an integer");
}

TEST_CASE("integers: spaces, empty text and trailing garbage are errors") {
  CHECK(error_of(parse_integer("", kMin, kMax)) == "'' is not an integer");
  CHECK(error_of(parse_integer(" 8", kMin, kMax)) == "' 8' is not an integer");
  CHECK(error_of(parse_integer("8 ", kMin, kMax)) == "'8 ' is not an integer");
  CHECK(error_of(parse_integer("- 8", kMin, kMax)) == "'- 8' is not an integer");
  CHECK(error_of(parse_integer("12x", kMin, kMax)) == "'12x' is not an integer");
  CHECK(error_of(parse_integer("1.5", kMin, kMax)) == "'1.5' is not an integer");
  CHECK(error_of(parse_integer("1e3", kMin, kMax)) == "'1e3' is not an integer");
  CHECK(error_of(parse_integer(std::string_view("1\0", 2), kMin, kMax)) != "(ok)");
}

TEST_CASE("integers: hex and octal forms are not accepted") {
  CHECK(error_of(parse_integer("0x10", kMin, kMax)) == "'0x10' is not an integer");
  CHECK(error_of(parse_integer("0X1f", kMin, kMax)) == "'0X1f' is not an integer");
  CHECK(error_of(parse_integer("010", kMin, kMax)) == "'010' is not an integer");
  CHECK(error_of(parse_integer("-007", kMin, kMax)) == "'-007' is not an integer");
  CHECK(error_of(parse_integer("0o7", kMin, kMax)) == "'0o7' is not an integer");
}

TEST_CASE("integers: ranges, negatives and overflow") {
  CHECK(*parse_integer("9223372036854775807", kMin, kMax) == kMax);
  CHECK(*parse_integer("-9223372036854775808", kMin, kMax) == kMin);
  CHECK(error_of(parse_integer("9223372036854775808", kMin, kMax)) ==
        "'9223372036854775808' is out of range [-9223372036854775808, 9223372036854775807]");
  CHECK(error_of(parse_integer("-9223372036854775809", kMin, kMax)) ==
        "'-9223372036854775809' is out of range [-9223372036854775808, 9223372036854775807]");
  CHECK(error_of(parse_integer("99999999999999999999999", 0, 10)) == "'99999999999999999999999' is out of range [0, 10]");
  CHECK(error_of(parse_integer("11", 0, 10)) == "'11' is out of range [0, 10]");
  CHECK(error_of(parse_integer("-3", -2, 10)) == "'-3' is out of range [-2, 10]");
  CHECK(error_of(parse_integer("-1", 0, 10)) == "'-1' is negative");
  CHECK(error_of(parse_integer("-99999999999999999999999", 1, 10)) == "'-99999999999999999999999' is negative");
  CHECK(*parse_int("2147483647") == 2147483647);
  CHECK(*parse_int("-2147483648") == -2147483647 - 1);
  CHECK(error_of(parse_int("2147483648")) == "'2147483648' is out of range [-2147483648, 2147483647]");
  CHECK(error_of(parse_int("0", 1, 4)) == "'0' is out of range [1, 4]");
}

TEST_CASE("integer lists") {
  CHECK(*parse_int_list("4", 0, 100) == std::vector<int>{4});
  CHECK(*parse_int_list("4,-1,+2", -5, 100) == std::vector<int>{4, -1, 2});
  CHECK(error_of(parse_int_list("", 0, 100)) == "empty list");
  CHECK(error_of(parse_int_list("4,", 0, 100)) == "'' is not an integer");
  CHECK(error_of(parse_int_list(",4", 0, 100)) == "'' is not an integer");
  CHECK(error_of(parse_int_list("4, 4", 0, 100)) == "' 4' is not an integer");
  CHECK(error_of(parse_int_list("4,x", 0, 100)) == "'x' is not an integer");
  CHECK(error_of(parse_int_list("4,-4", 0, 100)) == "'-4' is negative");
  CHECK(error_of(parse_int_list("1,2,3", 0, 100, 2)) == "too many entries in '1,2,3'");
  CHECK(parse_int_list("1,2", 0, 100, 2).ok());
}

TEST_CASE("non-negative doubles") {
  CHECK(*parse_nonnegative_double("0") == 0.0);
  CHECK(*parse_nonnegative_double("1.5") == 1.5);
  CHECK(*parse_nonnegative_double("2.5e-3") == 0.0025);
  CHECK(*parse_nonnegative_double("7") == 7.0);
  CHECK(*parse_nonnegative_double("-0") == 0.0);
  CHECK(*parse_nonnegative_double("1e-400") >= 0.0);  // underflow is a tiny number, not an error
  CHECK(error_of(parse_nonnegative_double("")) == "'' is not a number");
  CHECK(error_of(parse_nonnegative_double(" 1")) == "' 1' is not a number");
  CHECK(error_of(parse_nonnegative_double("1 ")) == "'1 ' is not a number");
  CHECK(error_of(parse_nonnegative_double("+1")) == "'+1' is not a number");
  CHECK(error_of(parse_nonnegative_double("1.5us")) == "'1.5us' is not a number");
  CHECK(error_of(parse_nonnegative_double("0x1p3")) == "'0x1p3' is not a number");
  CHECK(error_of(parse_nonnegative_double("-0.5")) == "'-0.5' is negative");
  CHECK(error_of(parse_nonnegative_double("nan")) == "'nan' is not finite");
  CHECK(error_of(parse_nonnegative_double("inf")) == "'inf' is not finite");
  CHECK(error_of(parse_nonnegative_double("-inf")) == "'-inf' is not finite");
  CHECK(error_of(parse_nonnegative_double("1e999")) == "'1e999' is not finite");
}

}  // namespace
}  // namespace cartplan
