// MPI test of the CARTPLAN_VERBOSE=1 cost-model notice on the graph path (model_notice.h): the
// first graph collective on a distributed-graph communicator looks up the model, and rank 0 says
// once which one it found, as Cart_neighborhood_create and Cart_halo_create do. Every rank's
// stderr goes to a file while two graph communicators make their first calls; then rank 0 must
// hold exactly one notice line (the second communicator says nothing: once per process), the
// others none, and the calls' data must be right.
//
//   graph_model_notice_test builtin       // no CARTPLAN_COST_MODEL, no file at the default location
//   graph_model_notice_test file PATH     // CARTPLAN_COST_MODEL=PATH
//   graph_model_notice_test missing       // CARTPLAN_COST_MODEL names no file: the graph plans
//                                         // with the built-in defaults, and says why
//   graph_model_notice_test quiet         // CARTPLAN_VERBOSE unset: no notice
// The program sets these variables itself (before MPI_Init), so it runs alike from a shell.
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "backends/mpi/cartplan_mpi.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;

// A ring both ways; its first graph collective (an allgather of rank + 7) creates cartplan's
// state there, which looks up the model.
bool first_call_on_ring(Harness& h) {
  const int left = (h.rank + h.size - 1) % h.size, right = (h.rank + 1) % h.size;
  const int in[2] = {left, right}, out[2] = {right, left};
  MPI_Comm g = MPI_COMM_NULL;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, in, MPI_UNWEIGHTED, 2, out, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g);
  const int mine = h.rank + 7;
  int got[2] = {-1, -1};
  const bool ok = Cart_graph_neighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, g) == MPI_SUCCESS && got[0] == left + 7 && got[1] == right + 7;
  MPI_Comm_free(&g);
  return ok;
}

// The lines of `text` that are model notices.
int notices(const std::string& text, std::string* last) {
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("cartplan: ", 0) == 0 && line.find("cost model") != std::string::npos) ++n, *last = line;
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  const std::string model = argc > 2 ? argv[2] : "";
  if (mode != "builtin" && mode != "file" && mode != "missing" && mode != "quiet") {
    std::fprintf(stderr, "usage: graph_model_notice_test builtin|file PATH|missing|quiet\n");
    return 2;
  }
  unsetenv("CARTPLAN_COST_MODEL");
  if (mode == "file") setenv("CARTPLAN_COST_MODEL", model.c_str(), 1);
  const std::string missing = "/nonexistent/cartplan_model.json";
  if (mode == "missing") setenv("CARTPLAN_COST_MODEL", missing.c_str(), 1);
  if (mode == "quiet") unsetenv("CARTPLAN_VERBOSE");
  else setenv("CARTPLAN_VERBOSE", "1", 1);
  const std::string config = "/nonexistent/cartplan_graph_model_notice";  // no calibration at the default location
  setenv("XDG_CONFIG_HOME", config.c_str(), 1);
  Harness h(&argc, &argv);
  // stderr into a file of this rank's while the graph calls run.
  char path[] = "/tmp/graph_model_notice.XXXXXX";
  const int fd = mkstemp(path);
  std::fflush(stderr);
  const int saved = dup(2);
  dup2(fd, 2);
  const bool first = first_call_on_ring(h), second = first_call_on_ring(h);
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  close(fd);
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  unlink(path);
  h.check(first && second, "both graph calls delivered");
  std::string line;
  const int n = notices(text, &line);
  const int want = mode != "quiet" && h.rank == 0 ? 1 : 0;
  h.check(n == want, "rank " + std::to_string(h.rank) + " printed " + std::to_string(n) + " model notices, expected " + std::to_string(want) +
                         " (stderr: '" + text + "')");
  if (want == 1 && mode == "file")
    h.check(line == "cartplan: cost model from CARTPLAN_COST_MODEL = " + model, "the notice names the file: '" + line + "'");
  if (want == 1 && mode == "builtin") {
    const std::string start = "cartplan: no calibrated cost model (CARTPLAN_COST_MODEL is unset and there is none at " + config + "/cartplan/cost_model_np";
    h.check(line.rfind(start, 0) == 0 && line.find("using the built-in defaults. cartplan-calibrate") != std::string::npos,
            "the notice says the built-in defaults are used: '" + line + "'");
  }
  if (want == 1 && mode == "missing") {
    const std::string start = "cartplan: cost model lookup failed (CARTPLAN_COST_MODEL: cannot read '" + missing + "'";
    const std::string end = "); using the built-in defaults.";
    h.check(line.rfind(start, 0) == 0 && line.size() > end.size() && line.compare(line.size() - end.size(), end.size(), end) == 0,
            "the notice says why the lookup failed: '" + line + "'");
  }
  return h.finish(("graph_model_notice_test " + mode).c_str());
}
