// Running the real `cartplan` binary from a CLI test: through /bin/sh (arguments may quote and
// redirect), stdin /dev/null so nothing waits for input, stdout and stderr captured in files
// under TEST_TMPDIR. Bazel runs tests in the workspace's runfiles root, so the binary is
// "tools/cartplan" (a test lists //tools:cartplan in its data).
//
//   cli::RunResult r = cli::run("plan --op alltoall --stencil moore:d=2,r=1");
//   CHECK(r.status == 0);
//   CHECK(cli::contains(r.out, "\"schema\""));
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace cartplan::tests::cli {

struct RunResult {
  int status = -1;  // exit status, or -1 if the process did not exit normally (e.g. a crash)
  std::string out;
  std::string err;
};

inline std::string temp_dir() {
  const char* d = std::getenv("TEST_TMPDIR");
  return d && *d ? d : "/tmp";
}

inline std::string temp_path(const std::string& name) { return temp_dir() + "/cli_test_" + name; }

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline RunResult run(const std::string& args) {
  const std::string out = temp_path("stdout"), err = temp_path("stderr");
  const std::string cmd = "tools/cartplan </dev/null " + args + " >'" + out + "' 2>'" + err + "'";
  const int raw = std::system(cmd.c_str());
  RunResult r;
  if (raw != -1 && WIFEXITED(raw)) r.status = WEXITSTATUS(raw);
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

inline bool contains(const std::string& haystack, const std::string& needle) { return haystack.find(needle) != std::string::npos; }

}  // namespace cartplan::tests::cli
