// MPI test of plans as input and output: Cart_request_plan and Collective::plan() return the
// canonical JSON of the plan a request runs, CARTPLAN_DUMP_PLANS=DIR writes each distinct plan
// there once, under its deterministic name, with the same text, and the Info key cartplan_plan
// runs a given (edited) plan, or refuses one that does not fit the request.
#include <dirent.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "backends/mpi/cartplan.hpp"
#include "backends/mpi/cartplan_mpi.h"
#include "engine/hybrid.h"
#include "engine/neighborhood.h"
#include "engine/planner.h"
#include "ir/json.h"
#include "ir/verify.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;

int value(int rank, int block, int j) { return (rank * 64 + block) * 32 + j; }

struct Moore2d {
  MPI_Comm cart = MPI_COMM_NULL;
  std::vector<int> sources;
  int me = 0;
};

// The 8-neighbour stencil on a periodic 2-d grid over all ranks; `info` at creation.
Moore2d moore(Harness& h, MPI_Info info = MPI_INFO_NULL) {
  Moore2d m;
  int dims[2] = {0, 0};
  MPI_Dims_create(h.size, 2, dims);
  int periods[2] = {1, 1};
  int offs[16], n = 0;
  for (int a = -1; a <= 1; ++a)
    for (int b = -1; b <= 1; ++b)
      if (a || b) {
        offs[n++] = a;
        offs[n++] = b;
      }
  h.check(Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, 8, offs, MPI_UNWEIGHTED, info, 0, &m.cart) == MPI_SUCCESS,
          "creation");
  MPI_Comm_rank(m.cart, &m.me);
  m.sources.resize(8);
  std::vector<int> targets(8);
  Cart_neighbor_get(m.cart, 8, m.sources.data(), MPI_UNWEIGHTED, 8, targets.data(), MPI_UNWEIGHTED);
  return m;
}

MPI_Info algo_info(const char* algo) {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_algorithm", algo);
  return info;
}

std::string request_plan(Harness& h, Cart_Request req) {
  char* json = nullptr;
  h.check(Cart_request_plan(req, &json) == MPI_SUCCESS && json, "Cart_request_plan succeeds");
  std::string text = json ? json : "";
  Cart_free_plan_json(json);
  return text;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The plan files in `dir`, sorted (temporary files of a write in progress excluded).
std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0) out.push_back(name);
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Runs a persistent alltoall and checks every block.
void run_and_check(Harness& h, const Moore2d& m, Cart_Request* req, std::vector<int>& send, std::vector<int>& recv,
                   int c, const std::string& what) {
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < c; ++j) send[i * c + j] = value(m.me, i, j);
  std::fill(recv.begin(), recv.end(), -1);
  h.check(Cart_start(req) == MPI_SUCCESS && Cart_wait(req) == MPI_SUCCESS, what + ": start and wait");
  bool ok = true;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < c; ++j) ok = ok && recv[i * c + j] == value(m.sources[i], i, j);
  h.check(ok, what + ": wrong data");
}

void inspection_and_dump(Harness& h, const std::string& dir) {
  setenv("CARTPLAN_DUMP_PLANS", dir.c_str(), 1);
  Moore2d m = moore(h);
  const int c = 3;
  std::vector<int> send(8 * c), recv(8 * c);
  MPI_Info combining = algo_info("combining"), direct = algo_info("direct");
  Cart_Request a = CART_REQUEST_NULL, b = CART_REQUEST_NULL, d = CART_REQUEST_NULL;
  h.check(Cart_alltoall_init(send.data(), c, MPI_INT, recv.data(), c, MPI_INT, m.cart, combining, &a) == MPI_SUCCESS, "init a");
  const std::string text = request_plan(h, a);
  cartplan::Result<cartplan::ir::Plan> plan = cartplan::ir::plan_from_json_string(text);
  h.check(plan.ok(), "the returned text parses: " + (plan ? std::string() : plan.error()));
  if (plan) {
    h.check(cartplan::ir::verify(*plan).empty(), "the returned plan verifies");
    h.check(plan->op() == cartplan::ir::Op::kAlltoall, "the returned plan is an alltoall plan");
    h.check(plan->algorithm() == cartplan::ir::Algorithm::kCombining, "the returned plan combines");
    h.check(cartplan::ir::to_json_string(*plan) == text, "the returned text is canonical");
  }
  run_and_check(h, m, &a, send, recv, c, "combining request");
  MPI_Barrier(MPI_COMM_WORLD);  // every rank has written (or skipped) its dump

  std::vector<std::string> files = files_in(dir);
  h.check(files.size() == 1, "one plan dumped after the first request, found " + std::to_string(files.size()));
  if (files.size() == 1) {
    h.check(files[0].rfind("cartplan-alltoall-combining-", 0) == 0, "dump name " + files[0]);
    h.check(read_file(dir + "/" + files[0]) == text, "the dumped file holds the text Cart_request_plan returns");
  }
  MPI_Barrier(MPI_COMM_WORLD);

  // The same plan again: no second file. A direct plan: a second file.
  h.check(Cart_alltoall_init(send.data(), c, MPI_INT, recv.data(), c, MPI_INT, m.cart, combining, &b) == MPI_SUCCESS, "init b");
  h.check(request_plan(h, b) == text, "an equal request reports the same plan");
  h.check(Cart_alltoall_init(send.data(), c, MPI_INT, recv.data(), c, MPI_INT, m.cart, direct, &d) == MPI_SUCCESS, "init d");
  const std::string direct_text = request_plan(h, d);
  h.check(direct_text != text, "the direct plan differs from the combining one");
  run_and_check(h, m, &d, send, recv, c, "direct request");
  MPI_Barrier(MPI_COMM_WORLD);
  files = files_in(dir);
  h.check(files.size() == 2, "two plans dumped, found " + std::to_string(files.size()));
  bool found_direct = false;
  for (const std::string& f : files)
    if (f.rfind("cartplan-alltoall-direct-", 0) == 0) found_direct = read_file(dir + "/" + f) == direct_text;
  h.check(found_direct, "the direct plan's dump holds its text");
  MPI_Barrier(MPI_COMM_WORLD);

  // C++: Collective::plan() is the same text.
  {
    int dims[2] = {0, 0};
    MPI_Dims_create(h.size, 2, dims);
    std::vector<std::vector<int>> offsets;
    for (int a = -1; a <= 1; ++a)
      for (int b = -1; b <= 1; ++b)
        if (a || b) offsets.push_back({a, b});
    cartplan::mpi::CartComm cart(MPI_COMM_WORLD, {dims[0], dims[1]}, {1, 1}, offsets);
    cartplan::mpi::Collective x =
        cartplan::mpi::Collective::alltoall(cart, send.data(), c, MPI_INT, recv.data(), c, MPI_INT, combining);
    h.check(x.plan() == text, "Collective::plan() returns the request's plan");
  }

  // Errors: through the error handler (MPI_ERRORS_RETURN here), with a message.
  char* json = nullptr;
  h.check(Cart_request_plan(CART_REQUEST_NULL, &json) == MPI_ERR_REQUEST && !json, "NULL request: MPI_ERR_REQUEST");
  h.check(Cart_request_plan(a, nullptr) == MPI_ERR_ARG, "NULL json: MPI_ERR_ARG");
  h.check(std::string(Cart_error_message()).find("json is NULL") != std::string::npos, "the message names json");
  Cart_free_plan_json(nullptr);

  // A dump directory that cannot be written: reported on stderr, and the call runs its plan (a
  // local debugging aid never changes what a rank does; dump_unwritable_test has it on one rank).
  setenv("CARTPLAN_DUMP_PLANS", (dir + "/missing/sub").c_str(), 1);
  std::vector<int> gs(c, m.me), gr(8 * c, -1);
  const int rc = Cart_allgather(gs.data(), c, MPI_INT, gr.data(), c, MPI_INT, m.cart);
  h.check(rc == MPI_SUCCESS, "unwritable dump directory: the call still succeeds, got " + std::to_string(rc));
  bool gathered = true;
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < c; ++j) gathered = gathered && gr[i * c + j] == m.sources[i];
  h.check(gathered, "unwritable dump directory: every block from its source");
  unsetenv("CARTPLAN_DUMP_PLANS");
  h.check(Cart_allgather(gs.data(), c, MPI_INT, gr.data(), c, MPI_INT, m.cart) == MPI_SUCCESS, "without dumps it runs");

  Cart_request_free(&a);
  Cart_request_free(&b);
  Cart_request_free(&d);
  MPI_Info_free(&combining);
  MPI_Info_free(&direct);
  MPI_Comm_free(&m.cart);
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

std::vector<cartplan::ir::Offset> moore_offsets() {
  std::vector<cartplan::ir::Offset> offsets;
  for (int a = -1; a <= 1; ++a)
    for (int b = -1; b <= 1; ++b)
      if (a || b) offsets.push_back({a, b});
  return offsets;
}

MPI_Info plan_info(const std::string& path) {
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cartplan_plan", path.c_str());
  return info;
}

bool message_has(const std::string& part) { return std::string(Cart_error_message()).find(part) != std::string::npos; }

void given_plans(Harness& h, const std::string& dir) {
  namespace ir = cartplan::ir;
  const cartplan::engine::Neighborhood nbh = *cartplan::engine::Neighborhood::create(2, moore_offsets());
  // The edit: dimension 1 first, where the planner's own order is natural.
  const ir::Plan edited = cartplan::engine::plan_combining(ir::Op::kAlltoall, nbh, {1, 0});
  const std::string text = ir::to_json_string(edited);
  const std::string path = dir + "/edited.json", garbage = dir + "/garbage.json", broken = dir + "/broken.json",
                    vn = dir + "/vonneumann.json", hybrid_path = dir + "/hybrid.json";
  // A hybrid plan (engine/hybrid.h): the four faces in a direct phase, the corners combined.
  const ir::Plan hybrid =
      cartplan::engine::plan_hybrid(ir::Op::kAlltoall, nbh, {0, 1}, {{-1, 0}, {1, 0}, {0, -1}, {0, 1}});
  if (h.rank == 0) {
    write_file(path, text);
    write_file(garbage, "{\"schema\": 1");
    // A parseable plan that loses its last round: the verifier must refuse it.
    nlohmann::json j = nlohmann::json::parse(text);
    j["phases"][0]["rounds"].erase(j["phases"][0]["rounds"].size() - 1);
    write_file(broken, j.dump());
    const cartplan::engine::Neighborhood four =
        *cartplan::engine::Neighborhood::create(2, {{1, 0}, {-1, 0}, {0, 1}, {0, -1}});
    write_file(vn, ir::to_json_string(cartplan::engine::plan_direct(ir::Op::kAlltoall, four)));
    write_file(hybrid_path, ir::to_json_string(hybrid));
  }
  MPI_Barrier(MPI_COMM_WORLD);

  Moore2d m = moore(h);
  const int c = 2;
  std::vector<int> send(8 * c), recv(8 * c);
  MPI_Info combining = algo_info("combining");
  Cart_Request own = CART_REQUEST_NULL, given = CART_REQUEST_NULL;
  h.check(Cart_alltoall_init(send.data(), c, MPI_INT, recv.data(), c, MPI_INT, m.cart, combining, &own) == MPI_SUCCESS,
          "init with the planner's plan");
  h.check(request_plan(h, own) != text, "the planner's own plan differs from the edited one");
  MPI_Info info = plan_info(path);
  h.check(Cart_alltoall_init(send.data(), c, MPI_INT, recv.data(), c, MPI_INT, m.cart, info, &given) == MPI_SUCCESS,
          std::string("init with cartplan_plan: ") + Cart_error_message());
  if (given) {
    h.check(request_plan(h, given) == text, "Cart_request_plan returns the given plan");
    run_and_check(h, m, &given, send, recv, c, "given plan");
    run_and_check(h, m, &given, send, recv, c, "given plan, second start");
  }

  // A hybrid plan runs like any combining plan (it is one, with a direct phase first).
  MPI_Info hybrid_info = plan_info(hybrid_path);
  Cart_Request hy = CART_REQUEST_NULL;
  h.check(Cart_alltoall_init(send.data(), c, MPI_INT, recv.data(), c, MPI_INT, m.cart, hybrid_info, &hy) == MPI_SUCCESS,
          std::string("init with a hybrid plan: ") + Cart_error_message());
  if (hy) {
    h.check(request_plan(h, hy) == ir::to_json_string(hybrid), "Cart_request_plan returns the hybrid plan");
    run_and_check(h, m, &hy, send, recv, c, "hybrid plan");
    run_and_check(h, m, &hy, send, recv, c, "hybrid plan, second start");
  }
  Cart_request_free(&hy);
  MPI_Info_free(&hybrid_info);

  // The op must match: an alltoall plan for an allgather is refused on every rank.
  Cart_Request wrong = CART_REQUEST_NULL;
  std::vector<int> gs(c), gr(8 * c);
  int rc = Cart_allgather_init(gs.data(), c, MPI_INT, gr.data(), c, MPI_INT, m.cart, info, &wrong);
  h.check(rc == MPI_ERR_ARG && !wrong, "an alltoall plan for an allgather: MPI_ERR_ARG, got " + std::to_string(rc));
  h.check(message_has("the plan is for alltoall, the request is allgather"), std::string("op named: ") + Cart_error_message());

  // Files that are not plans, or plans that do not verify: MPI_ERR_INFO_VALUE naming the key.
  for (const std::string& bad : {garbage, broken, dir + "/no-such-file.json"}) {
    MPI_Info b = plan_info(bad);
    rc = Cart_alltoall_init(send.data(), c, MPI_INT, recv.data(), c, MPI_INT, m.cart, b, &wrong);
    h.check(rc == MPI_ERR_INFO_VALUE && !wrong, bad + ": MPI_ERR_INFO_VALUE, got " + std::to_string(rc));
    h.check(message_has("Info cartplan_plan = '" + bad + "'"), std::string("key and path named: ") + Cart_error_message());
    MPI_Info_free(&b);
  }
  MPI_Info b = plan_info(broken);
  Cart_alltoall_init(send.data(), c, MPI_INT, recv.data(), c, MPI_INT, m.cart, b, &wrong);
  h.check(message_has("does not verify"), std::string("a plan losing a round does not verify: ") + Cart_error_message());
  MPI_Info_free(&b);

  // On the communicator: blocking calls and requests without Info keys run the given plan.
  Moore2d withplan = moore(h, info);
  h.check(withplan.cart != MPI_COMM_NULL, "creation with cartplan_plan");
  if (withplan.cart != MPI_COMM_NULL) {
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < c; ++j) send[i * c + j] = value(withplan.me, i, j);
    std::fill(recv.begin(), recv.end(), -1);
    h.check(Cart_alltoall(send.data(), c, MPI_INT, recv.data(), c, MPI_INT, withplan.cart) == MPI_SUCCESS, "blocking call");
    bool ok = true;
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < c; ++j) ok = ok && recv[i * c + j] == value(withplan.sources[i], i, j);
    h.check(ok, "blocking call with the communicator's plan: wrong data");
    Cart_Request r = CART_REQUEST_NULL;
    h.check(Cart_alltoall_init(send.data(), c, MPI_INT, recv.data(), c, MPI_INT, withplan.cart, MPI_INFO_NULL, &r) == MPI_SUCCESS,
            "init on the communicator with a plan");
    if (r) h.check(request_plan(h, r) == text, "the communicator's plan is the request's");
    Cart_request_free(&r);
    MPI_Comm_free(&withplan.cart);
  }

  // A plan for another neighbourhood is refused at creation, naming what differs.
  MPI_Info other = plan_info(vn);
  Moore2d refused;
  int dims[2] = {0, 0}, periods[2] = {1, 1};
  MPI_Dims_create(h.size, 2, dims);
  std::vector<int> flat;
  for (const cartplan::ir::Offset& o : moore_offsets()) flat.insert(flat.end(), o.begin(), o.end());
  rc = Cart_neighborhood_create(MPI_COMM_WORLD, 2, dims, periods, 8, flat.data(), MPI_UNWEIGHTED, other, 0, &refused.cart);
  h.check(rc == MPI_ERR_ARG, "a plan for another neighbourhood: MPI_ERR_ARG, got " + std::to_string(rc));
  h.check(message_has("the plan's neighbourhood has 4 offsets, the communicator's 8"),
          std::string("difference named: ") + Cart_error_message());
  MPI_Info_free(&other);

  Cart_request_free(&own);
  Cart_request_free(&given);
  MPI_Info_free(&info);
  MPI_Info_free(&combining);
  MPI_Comm_free(&m.cart);
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  // One directory for all ranks (they share the node's file system), made by rank 0.
  char path[4096] = {0};
  if (h.rank == 0) {
    const char* base = std::getenv("TMPDIR");
    std::snprintf(path, sizeof path, "%s/plans.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(path)) path[0] = '\0';
  }
  MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
  h.check(path[0] != '\0', "a temporary directory");
  if (path[0]) inspection_and_dump(h, path);
  if (path[0]) given_plans(h, path);
  return h.finish("plan_io_test");
}
