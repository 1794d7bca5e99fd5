// Strict JSON text reading shared by the plan and graph-plan readers: depth limit, duplicate
// keys, syntax errors.
#include "ir/json_strict.h"

#include <exception>
#include <functional>
#include <optional>
#include <set>
#include <vector>

namespace cartplan::ir {
namespace {

using nlohmann::json;

// Depth of [ and { outside strings, checked before nlohmann builds anything so that deeply
// nested input costs neither memory nor stack in the parser or in json's destructor.
std::optional<std::string> check_depth(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) {
        // Counted from 1, like nlohmann's positions in the syntax errors.
        return "invalid JSON at byte " + std::to_string(i + 1) + ": nesting deeper than " +
               std::to_string(max_depth) + " levels";
      }
    } else if (c == ']' || c == '}') {
      --depth;  // unbalanced brackets are left for the parser to report
    }
  }
  return std::nullopt;
}

// nlohmann keeps the last of duplicate keys; a strict reader must not silently drop one, so
// the parser callback tracks the keys of every open object and remembers the first duplicate.
class DuplicateKeys {
 public:
  bool operator()(int /*depth*/, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
        frames_.push_back(Frame{true, {}, {}, 0});
        break;
      case json::parse_event_t::array_start:
        frames_.push_back(Frame{false, {}, {}, 0});
        break;
      case json::parse_event_t::key: {
        Frame& f = frames_.back();
        f.key = parsed.get<std::string>();
        if (!f.keys.insert(f.key).second && !error_) error_ = path() + ": duplicate field " + quote_json_text(f.key);
        break;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        frames_.pop_back();
        next_element();
        break;
      case json::parse_event_t::value:
        next_element();
        break;
    }
    return true;
  }

  const std::optional<std::string>& error() const { return error_; }

 private:
  struct Frame {
    bool object;
    std::set<std::string> keys;
    std::string key;        // current key, objects only
    std::size_t index = 0;  // current element, arrays only
  };

  void next_element() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
  }

  // Path of the innermost open object (the one holding the duplicate).
  std::string path() const {
    std::string s = "$";
    for (std::size_t i = 0; i + 1 < frames_.size(); ++i) {
      const Frame& f = frames_[i];
      s += f.object ? "." + f.key : "[" + std::to_string(f.index) + "]";
    }
    return s;
  }

  std::vector<Frame> frames_;
  std::optional<std::string> error_;
};

std::string strip_exception_prefix(const std::string& what) {
  // "[json.exception.parse_error.101] parse error at ..." -> "parse error at ..."
  if (!what.empty() && what[0] == '[') {
    const auto close = what.find("] ");
    if (close != std::string::npos) return what.substr(close + 2);
  }
  return what;
}

}  // namespace

Result<json> parse_strict_json(std::string_view text, int max_depth) {
  if (auto err = check_depth(text, max_depth)) return fail(*err);
  json j;
  DuplicateKeys dup;
  try {
    j = json::parse(text.data(), text.data() + text.size(), std::ref(dup));
  } catch (const json::parse_error& e) {
    return fail("invalid JSON at byte " + std::to_string(e.byte) + ": " + strip_exception_prefix(e.what()));
  } catch (const std::exception& e) {
    return fail(std::string("invalid JSON: ") + strip_exception_prefix(e.what()));
  }
  if (dup.error()) return fail(*dup.error());
  return j;
}

std::string show_json_value(const json& j) {
  std::string s = j.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 64) s = s.substr(0, 61) + "...";
  return s;
}

std::string quote_json_text(const std::string& s) {
  std::string e = json(s).dump(-1, ' ', false, json::error_handler_t::replace);
  e = e.substr(1, e.size() - 2);
  if (e.size() > 64) e = e.substr(0, 61) + "...";
  return "'" + e + "'";
}

}  // namespace cartplan::ir
