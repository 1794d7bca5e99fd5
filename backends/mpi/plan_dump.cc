// Writing plans to the CARTPLAN_DUMP_PLANS directory, once per distinct plan and process.
#include "backends/mpi/plan_dump.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>

#include "ir/json.h"

namespace cartplan::mpi {

std::uint64_t plan_fingerprint(const std::string& text) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

std::string dump_file_name(const ir::Plan& plan, const std::string& text) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(plan_fingerprint(text)));
  const char* algo = plan.algorithm() == ir::Algorithm::kCombining ? "combining" : "direct";
  return std::string("cartplan-") + ir::to_string(plan.op()) + "-" + algo + "-" + hex + ".json";
}

Result<std::string> dump_plan(const std::string& dir, const ir::Plan& plan) {
  const std::string text = ir::to_json_string(plan);
  const std::string path = dir + "/" + dump_file_name(plan, text);
  static std::mutex mu;  // calls on different communicators may come from different threads
  static std::set<std::string> written;
  std::lock_guard<std::mutex> lock(mu);
  if (written.count(path)) return std::string();
  const std::string tmp = path + ".tmp." + std::to_string(static_cast<long>(getpid()));
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return fail("CARTPLAN_DUMP_PLANS: cannot write in '" + dir + "': " + std::strerror(errno));
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const bool closed = std::fclose(f) == 0;
  if (!ok || !closed || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    return fail("CARTPLAN_DUMP_PLANS: cannot write '" + path + "': " + why);
  }
  written.insert(path);
  return path;
}

std::string dump_plan_if_requested(const ir::Plan& plan) {
  const char* dir = std::getenv("CARTPLAN_DUMP_PLANS");
  if (!dir || !*dir) return std::string();
  Result<std::string> written = dump_plan(dir, plan);
  if (written) return *written;
  static std::once_flag reported;
  std::call_once(reported, [&] {
    std::fprintf(stderr, "cartplan: %s (this process dumps no plan it cannot write; the run goes on)\n",
                 written.error().c_str());
  });
  return std::string();
}

}  // namespace cartplan::mpi
