// Reading whole files with a size limit (read_file.h).
#include "ir/read_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace cartplan {

Result<std::string> read_file_bounded(const std::string& path, const ReadOptions& options) {
  const std::string shown = "'" + (options.shown.empty() ? path : options.shown) + "'";
  const std::size_t max_bytes = options.max_bytes;
  const bool is_stdin = options.dash_is_stdin && path == "-";
  std::FILE* f = is_stdin ? stdin : std::fopen(path.c_str(), "rb");
  if (!f) return fail("cannot read " + shown + ": " + std::strerror(errno));
  std::string text;
  char buf[1 << 16];
  bool too_large = false;
  while (std::size_t n = std::fread(buf, 1, sizeof buf, f)) {
    text.append(buf, n);
    if (text.size() > max_bytes) {
      too_large = true;
      break;
    }
  }
  // fread stops on errors as well as at the end (EISDIR for a directory, for instance).
  const int err = std::ferror(f) ? errno : 0;
  if (!is_stdin) std::fclose(f);
  if (too_large) return fail("cannot read " + shown + ": larger than " + std::to_string(max_bytes) + " bytes");
  if (err != 0) return fail("cannot read " + shown + ": " + std::strerror(err));
  return text;
}

}  // namespace cartplan
