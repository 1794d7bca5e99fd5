// The one bounded file reader of cartplan: plans, spec files, cost-model files and Info keys
// all read through it, so that a path naming /dev/zero, a FIFO that never ends or a huge file
// ends quickly with an error instead of exhausting memory.
//
//   Result<std::string> text = read_file_bounded("plan.json");
//   if (!text) std::cerr << text.error() << "\n";   // "cannot read 'plan.json': ..."
#pragma once

#include <cstddef>
#include <string>

#include "ir/result.h"

namespace cartplan {

// Plans, spec files and cost models: far more than any valid input needs (the largest plans
// of kMaxOffsets offsets are a few MiB), little enough to fail fast.
inline constexpr std::size_t kMaxInputFileBytes = std::size_t{256} << 20;

struct ReadOptions {
  std::size_t max_bytes = kMaxInputFileBytes;
  bool dash_is_stdin = false;  // "-" reads standard input (the CLI's verify)
  std::string shown;           // the name in messages (e.g. "@file.json"); empty: the path
};

// The whole file, or an error naming it ("cannot read 'NAME': REASON") when it cannot be
// opened or read, or holds more than max_bytes bytes.
Result<std::string> read_file_bounded(const std::string& path, const ReadOptions& options = {});

}  // namespace cartplan
