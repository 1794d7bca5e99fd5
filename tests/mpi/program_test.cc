// The MPI backend runs exactly the program engine::lower() makes: for alltoall, allgather,
// alltoallv and allreduce, direct and combining, on tori and meshes, packed and by struct
// datatypes, every rank compares Cart_request_program's text with lower() of the request's own
// plan (Cart_request_plan) for its buffers, and checks the data the request delivered.
#include <mpi.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "engine/bind.h"
#include "engine/lower.h"
#include "engine/program_print.h"
#include "ir/json.h"
#include "tests/mpi/harness.h"

namespace {

using cartplan::mpitest::Harness;
namespace engine = cartplan::engine;
namespace ir = cartplan::ir;

enum class Op { kAlltoall, kAllgather, kAlltoallv, kAllreduce };
const char* kOpNames[] = {"alltoall", "allgather", "alltoallv", "allreduce"};

std::string take(char* text) {
  std::string s = text ? text : "";
  Cart_free_plan_json(text);
  return s;
}

struct Case {
  int d = 2;
  std::vector<int> dims, periods;
  std::vector<int> offsets;  // t * d
  int t = 0;
};

Case box_case(int d, int size, bool mesh) {
  Case c;
  c.d = d;
  c.dims.assign(d, 0);
  MPI_Dims_create(size, d, c.dims.data());
  c.periods.assign(d, 1);
  if (mesh) c.periods[0] = 0;
  std::vector<int> o(d, -1);
  for (;;) {
    c.offsets.insert(c.offsets.end(), o.begin(), o.end());
    ++c.t;
    int k = 0;
    while (k < d && o[k] == 1) o[k++] = -1;
    if (k == d) break;
    ++o[k];
  }
  return c;
}

void run_case(Harness& h, const Case& c, Op op, const char* algo, const char* struct_min, const char* home_max,
              const char* trailer_min, int m) {
  const std::string what = std::string(kOpNames[static_cast<int>(op)]) + " " + algo + " d=" + std::to_string(c.d) +
                           (c.periods[0] ? " torus" : " mesh") + " m=" + std::to_string(m) + " struct_min=" + struct_min +
                           " home_max=" + home_max + " trailer_min=" + trailer_min;
  MPI_Comm cart = cartplan::mpitest::open_cart(c.d, c.dims, c.periods, c.t, c.offsets, algo, struct_min);
  std::vector<int> sources(c.t), targets(c.t);
  Cart_neighbor_get(cart, c.t, sources.data(), MPI_UNWEIGHTED, c.t, targets.data(), MPI_UNWEIGHTED);
  // Block i of alltoallv has m * (i % 3 + 1) ints, so blocks differ in size and position.
  std::vector<int> counts(c.t), displs(c.t);
  int total = 0;
  for (int i = 0; i < c.t; ++i) {
    counts[i] = op == Op::kAlltoallv ? m * (i % 3 + 1) : m;
    displs[i] = total;
    total += counts[i];
  }
  const int nsend = op == Op::kAllgather || op == Op::kAllreduce ? m : total;
  const int nrecv = op == Op::kAllreduce ? m : total;
  std::vector<int> send(nsend), recv(nrecv, -1);
  for (int j = 0; j < nsend; ++j) send[j] = h.rank * 100000 + j;
  Cart_Request req = CART_REQUEST_NULL;
  int rc = MPI_SUCCESS;
  // Blocks received straight into their recv blocks in every message, or in none.
  MPI_Info init_info;
  MPI_Info_create(&init_info);
  MPI_Info_set(init_info, "cartplan_home_max_bytes", home_max);
  MPI_Info_set(init_info, "cartplan_trailer_min_bytes", trailer_min);
  switch (op) {
    case Op::kAlltoall: rc = Cart_alltoall_init(send.data(), m, MPI_INT, recv.data(), m, MPI_INT, cart, init_info, &req); break;
    case Op::kAllgather: rc = Cart_allgather_init(send.data(), m, MPI_INT, recv.data(), m, MPI_INT, cart, init_info, &req); break;
    case Op::kAlltoallv:
      rc = Cart_alltoallv_init(send.data(), counts.data(), displs.data(), MPI_INT, recv.data(), counts.data(), displs.data(),
                               MPI_INT, cart, init_info, &req);
      break;
    case Op::kAllreduce:
      rc = Cart_allreduce_init(send.data(), recv.data(), m, MPI_INT, MPI_SUM, cart, init_info, &req);
      break;
  }
  MPI_Info_free(&init_info);
  h.check(rc == MPI_SUCCESS, what + ": init");
  if (rc != MPI_SUCCESS) {
    MPI_Comm_free(&cart);
    return;
  }
  h.check(Cart_start(&req) == MPI_SUCCESS && Cart_wait(&req) == MPI_SUCCESS, what + ": start and wait");

  // The data: block i comes from the process at -offset[i] (sources[i]); nothing outside the mesh.
  bool right = true;
  if (op == Op::kAllreduce) {
    for (int j = 0; j < m; ++j) {
      long long want = 0;
      bool any = false;
      for (int i = 0; i < c.t; ++i)
        if (sources[i] != MPI_PROC_NULL) {
          want += sources[i] * 100000 + j;
          any = true;
        }
      right = right && (any ? recv[j] == static_cast<int>(want) : recv[j] == -1);
    }
  } else {
    for (int i = 0; i < c.t; ++i)
      for (int j = 0; j < counts[i]; ++j) {
        const int from = op == Op::kAllgather ? j : displs[i] + j;
        right = right && recv[displs[i] + j] == (sources[i] == MPI_PROC_NULL ? -1 : sources[i] * 100000 + from);
      }
  }
  h.check(right, what + ": wrong data");

  // The program lower() makes for this rank from the request's plan and these buffers.
  char* plan_text = nullptr;
  char* program_text = nullptr;
  h.check(Cart_request_plan(req, &plan_text) == MPI_SUCCESS, what + ": Cart_request_plan");
  h.check(Cart_request_program(req, &program_text) == MPI_SUCCESS, what + ": Cart_request_program");
  const std::string plan_json = take(plan_text), program_json = take(program_text);
  cartplan::Result<ir::Plan> plan = ir::plan_from_json_string(plan_json);
  h.check(plan.ok(), what + ": the request's plan parses");
  if (plan.ok()) {
    std::vector<bool> per(c.periods.begin(), c.periods.end());
    const engine::Grid grid = *engine::Grid::create(c.dims, per);
    const engine::BoundPlan bound = *engine::Binder::create(*plan)->bind(grid, grid.coords(h.rank), {0});
    engine::Layout layout;
    const std::int64_t b = 4 * std::int64_t{m};
    // The caller's blocks as the backend sees them: blocks without a peer are not significant.
    if (op == Op::kAllreduce) {
      layout.send = {{b, true}};
      layout.recv = {{b, true}};
      layout.unit = {b, true};
      layout.recv_user = {true};
      layout.shape_bytes = {b};
    } else {
      for (int i = 0; i < (op == Op::kAllgather ? 1 : c.t); ++i)
        layout.send.push_back({op == Op::kAllgather || targets[i] != MPI_PROC_NULL ? 4 * std::int64_t{counts[i]} : 0, true});
      for (int i = 0; i < c.t; ++i) layout.recv.push_back({sources[i] != MPI_PROC_NULL ? 4 * std::int64_t{counts[i]} : 0, true});
      if (op == Op::kAlltoallv)
        for (int i = 0; i < c.t; ++i) layout.shape_bytes.push_back(4 * std::int64_t{counts[i]});
      else
        layout.shape_bytes = {b};
    }
    engine::LowerOptions lo;
    lo.struct_min_bytes = std::atoll(struct_min);
    lo.home_max_message_bytes = std::atoll(home_max);
    lo.trailer_min_bytes = std::atoll(trailer_min);
    cartplan::Result<engine::Program> mine = engine::lower(*plan, bound, layout, lo);
    h.check(mine.ok(), what + ": lower");
    if (mine.ok()) {
      const std::string expected = engine::to_json(*mine).dump();
      h.check(program_json == expected, what + ": the backend's program differs from lower()'s:\n  backend " +
                                            program_json.substr(0, 400) + "\n  lower   " + expected.substr(0, 400));
    }
  }
  Cart_request_free(&req);
  MPI_Comm_free(&cart);
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(&argc, &argv);
  for (int d : {2, 3})
    for (bool mesh : {false, true}) {
      const Case c = box_case(d, h.size, mesh);
      for (Op op : {Op::kAlltoall, Op::kAllgather, Op::kAlltoallv, Op::kAllreduce}) {
        // v blocks on a mesh run direct unless every call agrees (exchange_settle.cc).
        if (op == Op::kAlltoallv && mesh) continue;
        for (const char* algo : {"direct", "combining"})
          for (const char* struct_min : {"-1", "0", "256"})
            // Homes in every message or none, without trailers; then trailers on every message
            // (and every size) and from 1000 bytes on (at m = 100 only some messages of a
            // phase have one), with homes in every message.
            for (const auto& [home_max, trailer_min] : {std::pair{"-1", "-1"}, std::pair{"0", "-1"}, std::pair{"-1", "0"},
                                                       std::pair{"-1", "1000"}})
              for (int m : {1, 100}) run_case(h, c, op, algo, struct_min, home_max, trailer_min, m);
      }
    }
  // Errors: a NULL request or a NULL out-pointer.
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  char* text = nullptr;
  h.check(Cart_request_program(CART_REQUEST_NULL, &text) == MPI_ERR_REQUEST, "Cart_request_program(NULL request)");
  return h.finish("program_test");
}
