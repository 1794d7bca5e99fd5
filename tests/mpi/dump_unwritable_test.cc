// CARTPLAN_DUMP_PLANS naming a directory that one rank cannot write (rank 0: a path under
// /dev/null, which not even root can create; the other ranks: a fresh directory of their own):
// a dump is a local debugging aid, so every rank still runs the agreed plan. The native API's
// blocking, non-blocking and persistent calls succeed with every block right; the drop-in
// (linked in, run with CARTPLAN_INTERPOSE_ALGORITHM=combining) accelerates
// MPI_Neighbor_alltoall / MPI_Ineighbor_alltoall on every rank, rank 0 included, every block
// right; rank 0 reports the failure once on stderr (captured), the others write their dumps.
// Without the fix, rank 0's native calls fail (MPI_ERR_IO) while its peers wait for it, and its
// drop-in verdict passes through while theirs accelerate: a hang, killed by run_mpi.sh's limit.
#include <dirent.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/mpi/harness.h"

extern "C" long CARTPLAN_Accelerated_calls(MPI_Comm comm);

namespace {

using cartplan::mpitest::Harness;

int value(int rank, int block, int j) { return rank * 1000 + block * 10 + j; }

// The native API on a 2-D Moore torus with the combining plan: blocking, non-blocking and
// persistent alltoall, every block checked against its source.
void native_calls(Harness& h) {
  int dims[2] = {0, 0};
  MPI_Dims_create(h.size, 2, dims);
  std::vector<int> offsets;
  for (int x = -1; x <= 1; ++x)
    for (int y = -1; y <= 1; ++y)
      if (x || y) offsets.insert(offsets.end(), {x, y});
  const int t = 8, c = 2;
  MPI_Comm cart = cartplan::mpitest::open_cart(2, {dims[0], dims[1]}, {1, 1}, t, offsets, "combining");
  std::vector<int> sources(t);
  for (int i = 0; i < t; ++i) {
    int out = 0;
    Cart_relative_shift(cart, &offsets[2 * i], &sources[i], &out);
  }
  std::vector<int> send(t * c), recv(t * c);
  for (int i = 0; i < t; ++i)
    for (int j = 0; j < c; ++j) send[i * c + j] = value(h.rank, i, j);
  auto check = [&](int rc, const std::string& what) {
    h.check(rc == MPI_SUCCESS, what + ": MPI_SUCCESS (" + std::to_string(rc) + ")");
    bool ok = true;
    for (int i = 0; i < t; ++i)
      for (int j = 0; j < c; ++j) ok = ok && recv[i * c + j] == value(sources[i], i, j);
    h.check(ok, what + ": every block from its source");
    recv.assign(recv.size(), -1);
  };
  check(Cart_alltoall(send.data(), c, MPI_INT, recv.data(), c, MPI_INT, cart), "blocking");
  Cart_Request q = CART_REQUEST_NULL;
  int rc = Cart_ialltoall(send.data(), c, MPI_INT, recv.data(), c, MPI_INT, cart, &q);
  if (rc == MPI_SUCCESS) rc = Cart_wait(&q);
  check(rc, "non-blocking");
  rc = Cart_alltoall_init(send.data(), c, MPI_INT, recv.data(), c, MPI_INT, cart, MPI_INFO_NULL, &q);
  for (int it = 0; it < 3 && rc == MPI_SUCCESS; ++it) {
    rc = Cart_start(&q);
    if (rc == MPI_SUCCESS) rc = Cart_wait(&q);
    check(rc, "persistent, start " + std::to_string(it));
  }
  Cart_request_free(&q);
  MPI_Comm_free(&cart);
}

// The drop-in on a distributed graph of the 2-D Moore torus (grid named by Info hints):
// blocking and non-blocking neighbour alltoall, every block checked against its source (where a
// process is a neighbour several times, MPI matches its messages in order: block i still comes
// from sources[i]'s block i), accelerated on every rank.
void dropin_calls(Harness& h) {
  std::vector<int> sources;
  MPI_Comm graph = cartplan::mpitest::open_moore_graph(h.rank, h.size, &sources);
  const int t = 8, c = 3;
  std::vector<int> send(t * c), recv(t * c, -1);
  for (int i = 0; i < t; ++i)
    for (int j = 0; j < c; ++j) send[i * c + j] = value(h.rank, i, j);
  auto right = [&] {
    bool ok = true;
    for (int i = 0; i < t; ++i)
      for (int j = 0; j < c; ++j) ok = ok && recv[i * c + j] == value(sources[i], i, j);
    recv.assign(recv.size(), -1);
    return ok;
  };
  h.check(MPI_Neighbor_alltoall(send.data(), c, MPI_INT, recv.data(), c, MPI_INT, graph) == MPI_SUCCESS && right(),
          "drop-in blocking: every block from its source");
  MPI_Request q;
  MPI_Ineighbor_alltoall(send.data(), c, MPI_INT, recv.data(), c, MPI_INT, graph, &q);
  h.check(MPI_Wait(&q, MPI_STATUS_IGNORE) == MPI_SUCCESS && right(), "drop-in non-blocking: every block from its source");
  h.check(CARTPLAN_Accelerated_calls(graph) >= 2, "the drop-in ran both calls through cartplan on this rank (" +
                                                      std::to_string(CARTPLAN_Accelerated_calls(graph)) + ")");
  MPI_Comm_free(&graph);
}

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') names.push_back(e->d_name);
    closedir(d);
  }
  return names;
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/cartplan-dumps-XXXXXX";
  const bool unwritable = h.rank == 0;
  if (unwritable) dir = "/dev/null/cartplan-dumps";
  else h.check(mkdtemp(dir.data()) != nullptr, "a dump directory");
  setenv("CARTPLAN_DUMP_PLANS", dir.c_str(), 1);
  // Rank 0's stderr goes to a file while the calls run, to count the reports.
  const std::string err_path = std::string(tmp && *tmp ? tmp : "/tmp") + "/dump_unwritable_stderr." + std::to_string(getpid());
  int saved = -1;
  if (unwritable) {
    std::fflush(stderr);
    saved = dup(2);
    h.check(std::freopen(err_path.c_str(), "w", stderr) != nullptr, "stderr to a file");
  }
  native_calls(h);
  dropin_calls(h);
  if (unwritable) {
    std::fflush(stderr);
    dup2(saved, 2);
    close(saved);
    std::ifstream in(err_path);
    std::stringstream text;
    text << in.rdbuf();
    std::remove(err_path.c_str());
    const std::string s = text.str();
    std::size_t reports = 0;
    for (std::size_t at = s.find("CARTPLAN_DUMP_PLANS"); at != std::string::npos; at = s.find("CARTPLAN_DUMP_PLANS", at + 1)) ++reports;
    h.check(reports == 1, "the unwritable directory is reported once on stderr, found " + std::to_string(reports) + ":\n" + s);
  } else {
    const std::vector<std::string> files = files_in(dir);
    h.check(!files.empty(), "the writable ranks dump their plans");
    for (const std::string& f : files) std::remove((dir + "/" + f).c_str());
    rmdir(dir.c_str());
  }
  return h.finish("dump_unwritable_test");
}
