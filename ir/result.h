// Result<T>: a value or a user-facing error message (cartplan's error type for bad input).
//
// User mistakes (bad specs, malformed plans, inconsistent arguments) come back as errors with a
// message that names the bad input; cartplan's own bugs are assertions. Library code never exits.
//
//   cartplan::Result<int> parse_int(std::string_view s);
//   auto r = parse_int("12");
//   if (!r) std::cerr << r.error() << "\n"; else use(*r);
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace cartplan {

// The message of a user-facing error (what Result holds instead of a value). Distinct type so
// Result<std::string> stays unambiguous. Not an exception: the C++ MPI API throws
// cartplan::mpi::MpiError (backends/mpi/cartplan.hpp).
struct ErrorMessage {
  std::string message;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}            // NOLINT: implicit on purpose
  Result(ErrorMessage error) : v_(std::move(error)) {}        // NOLINT: implicit on purpose

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }

  const T& value() const& { assert(ok()); return std::get<T>(v_); }
  T& value() & { assert(ok()); return std::get<T>(v_); }
  T&& value() && { assert(ok()); return std::get<T>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  const std::string& error() const { assert(!ok()); return std::get<ErrorMessage>(v_).message; }

 private:
  std::variant<T, ErrorMessage> v_;
};

// Shorthand for returning an error: `return fail("dims must be positive");`
inline ErrorMessage fail(std::string message) { return ErrorMessage{std::move(message)}; }

}  // namespace cartplan
