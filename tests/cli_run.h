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

#include <doctest/doctest.h>

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

// Runs every case of an invalid-input corpus: lines "ARGS<TAB>STATUS<TAB>STDERR TEXT" ('#'
// comments, blank lines). Each case must exit with STATUS, print the text to stderr, no
// "internal error", and nothing to stdout when STATUS is 2; with `cartplan_prefix`, such
// stderr also starts with "cartplan: " (unless ARGS is empty: the usage). At least `min_cases`.
inline void check_corpus(const std::string& path, int min_cases, bool cartplan_prefix) {
  std::ifstream in(path);
  REQUIRE(in.good());
  int cases = 0, line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    const std::size_t t1 = line.find('\t'), t2 = line.find('\t', t1 + 1);
    REQUIRE_MESSAGE((t1 != std::string::npos && t2 != std::string::npos), "line ", line_no, " needs two tabs");
    const std::string args = line.substr(0, t1), want_err = line.substr(t2 + 1);
    const int want_status = std::stoi(line.substr(t1 + 1, t2 - t1 - 1));
    REQUIRE_MESSAGE(!want_err.empty(), "line ", line_no, " has no expected stderr text");
    ++cases;
    INFO(path, ":", line_no, ": cartplan ", args);
    const RunResult r = run(args);
    CHECK(r.status == want_status);
    CHECK_MESSAGE(contains(r.err, want_err), "stderr was: ", r.err);
    CHECK_MESSAGE(!contains(r.err, "internal error"), "stderr was: ", r.err);
    if (want_status == 2 && !args.empty()) {
      CHECK(r.out.empty());
      if (cartplan_prefix) CHECK_MESSAGE(r.err.rfind("cartplan: ", 0) == 0, "stderr was: ", r.err);
    }
  }
  CHECK(cases >= min_cases);
}

}  // namespace cartplan::tests::cli
