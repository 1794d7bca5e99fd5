// The environment switches of the interposition layer.
#include "backends/interpose/guard.h"

#include <cstdlib>
#include <cstring>

namespace cartplan::interpose {

int read_enabled() {
  const char* v = std::getenv("CARTPLAN_INTERPOSE");
  enabled_state = v && std::strcmp(v, "0") == 0 ? 0 : 1;
  return enabled_state;
}

bool verbose() {
  static const bool on = [] {
    const char* v = std::getenv("CARTPLAN_VERBOSE");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return on;
}

}  // namespace cartplan::interpose
