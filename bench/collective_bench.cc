// collective_bench: one neighbourhood collective at several block sizes, cartplan's algorithms
// (auto, direct, combining, hybrid, log-round; persistent and blocking) against the linear loop
// that Open MPI's and MPICH's neighbourhood collectives run (every MPI_Irecv, every MPI_Isend, one
// MPI_Waitall; also as persistent requests), each variant's data checked before it is timed and
// printed beside the cost model's prediction. For sweeps under SimGrid's SMPI (bench/smpi/sweep.sh);
// it runs under mpirun as well.
//
//   smpirun -np 64 -platform P.xml -hostfile P.hosts bazel-bin/bench/collective_bench
//       --stencil box:d=3,n=3,f=-1 --op alltoall --m 1,10,100 [--iters 20] [--warmup 3] [--dims 4,4,4]
//       [--periodic 1] [--cost-model FILE] [--variants NAME,NAME]
//
// Timing: each variant starts after an untimed MPI_Barrier, so that every variant starts from the
// same skew (back-to-back multi-phase exchanges settle into a steady state that depends on how the
// ranks started: docs/smpi.md); then its calls run back to back (--warmup untimed, then --iters
// timed). A rank's time is its own interval from the start of its first timed call to the end of
// its last, divided by --iters; the reported time is the maximum over ranks. No barrier is inside
// the interval, so its exit skew is not measured.
// sync_us (SMPI only): one more call after a barrier, from the last rank's entry to the last
// rank's exit on the simulator's global clock (time_synchronized).
// Output (rank 0): one line per variant, whitespace-separated, under a '#' header line:
//   np stencil op m variant algorithm us sync_us predicted_us check
// Exit status 0 when every variant delivered the expected data, 1 otherwise, 2 on bad options.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "backends/mpi/model_in_use.h"
#include "backends/mpi/node_map.h"
#include "backends/mpi/openmpi_profile.h"
#include "bench/collective_workload.h"
#include "engine/grid.h"
#include "engine/lower.h"
#include "engine/predict.h"
#include "engine/spec.h"
#include "ir/json.h"

namespace {

using cartplan::bench::Workload;

struct Args {
  std::string stencil = "box:d=3,n=3,f=-1";
  std::string op = "alltoall";
  std::vector<int> ms = {1, 10, 100};
  int iters = 20, warmup = 3;
  std::vector<int> dims;  // empty: MPI_Dims_create
  int periodic = 1;
  std::optional<std::string> cost_model;
  std::vector<std::string> only;  // --variants: run only these
};

[[noreturn]] void die(const std::string& msg, int code = 2) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::fprintf(stderr, "collective_bench: %s\n", msg.c_str());
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();  // MPI_Abort does not return
}

void ok(int rc, const std::string& what) {
  if (rc != MPI_SUCCESS) die(what + " failed: " + Cart_error_message(), 3);
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t p = 0; p <= text.size();) {
    const std::size_t c = std::min(text.find(',', p), text.size());
    out.push_back(text.substr(p, c - p));
    p = c + 1;
  }
  return out;
}

std::vector<int> ints(const std::string& flag, const std::string& text, int lo) {
  std::vector<int> out;
  for (const std::string& item : split(text)) {
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < lo || v > (1 << 24)) die(flag + " wants integers >= " + std::to_string(lo) + ", not '" + text + "'");
    out.push_back(static_cast<int>(v));
  }
  return out;
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (i + 1 >= argc) die("missing value for " + k);
    const std::string v = argv[++i];
    if (k == "--stencil") a.stencil = v;
    else if (k == "--op") a.op = v;
    else if (k == "--m") a.ms = ints(k, v, 0);
    else if (k == "--iters") a.iters = ints(k, v, 1).at(0);
    else if (k == "--warmup") a.warmup = ints(k, v, 0).at(0);
    else if (k == "--dims") a.dims = ints(k, v, 1);
    else if (k == "--periodic") a.periodic = ints(k, v, 0).at(0);
    else if (k == "--cost-model") a.cost_model = v;
    else if (k == "--variants") a.only = split(v);
    else die("unknown option " + k);
  }
  if (a.op != "alltoall" && a.op != "allgather" && a.op != "alltoallv") die("--op must be alltoall, allgather or alltoallv, not " + a.op);
  if (a.periodic > 1) die("--periodic must be 0 or 1");
  return a;
}

// A way to run the collective once, the plan kind and the model's prediction.
struct Variant {
  std::string name, algorithm = "-";
  std::function<void()> run;
  std::function<void()> cleanup;
  double predicted_us = std::nan("");
};

constexpr const char* kAlgorithms[] = {"auto", "direct", "combining", "hybrid", "loground"};

// One cartplan communicator per algorithm (Info cartplan_algorithm at creation, so blocking
// calls use it too) and the pricing the model applies to this workload.
class Bench {
 public:
  Bench(const Args& a, const cartplan::engine::Neighborhood& nbh) : a_(a), nbh_(nbh) {
    MPI_Comm_size(MPI_COMM_WORLD, &np_);
    const int d = nbh.ndims();
    dims_ = a.dims.empty() ? std::vector<int>(d, 0) : a.dims;
    if (static_cast<int>(dims_.size()) != d) die("--dims has " + std::to_string(dims_.size()) + " values, the stencil d = " + std::to_string(d));
    if (a.dims.empty()) MPI_Dims_create(np_, d, dims_.data());
    std::vector<int> periods(d, a.periodic), offsets;
    for (const auto& o : nbh.offsets()) offsets.insert(offsets.end(), o.begin(), o.end());
    for (const char* algo : kAlgorithms) {
      MPI_Info info;
      MPI_Info_create(&info);
      MPI_Info_set(info, "cartplan_algorithm", algo);
      if (a.cost_model) MPI_Info_set(info, "cartplan_cost_model", a.cost_model->c_str());
      MPI_Comm c = MPI_COMM_NULL;
      ok(Cart_neighborhood_create(MPI_COMM_WORLD, d, dims_.data(), periods.data(), nbh.size(), offsets.data(), MPI_UNWEIGHTED, info,
                                  0, &c),
         std::string("Cart_neighborhood_create (") + algo + ")");
      MPI_Info_free(&info);
      carts_.push_back(c);
    }
    if (carts_[0] == MPI_COMM_NULL) die("the process grid needs fewer processes than np = " + std::to_string(np_));
    auto model = cartplan::mpi::model_in_use(carts_[0], a.cost_model);
    if (!model) die("cost model: " + model.error());
    model_ = model->model;
    grid_ = cartplan::engine::Grid::create(dims_, std::vector<bool>(d, a.periodic != 0)).value();
    ok(cartplan::mpi::node_placement(carts_[0], &placement_), "node placement");
  }
  ~Bench() {
    for (MPI_Comm& c : carts_) MPI_Comm_free(&c);
  }
  MPI_Comm comm() const { return carts_[0]; }
  const std::vector<int>& dims() const { return dims_; }

  std::vector<Variant> variants(Workload& w) const {
    std::vector<Variant> out;
    for (std::size_t k = 0; k < carts_.size(); ++k) {
      out.push_back(persistent(w, k));
      Variant b{std::string("cart_") + kAlgorithms[k] + "_blocking", out.back().algorithm, nullptr, nullptr, out.back().predicted_us};
      MPI_Comm c = carts_[k];
      b.run = [&w, c] { ok(w.blocking(c), "blocking call"); };
      out.push_back(b);
    }
    add_linear(w, out);
    return out;
  }

 private:
  // The persistent request of algorithm k, priced as the plan it runs.
  Variant persistent(Workload& w, std::size_t k) const {
    auto req = std::make_shared<Cart_Request>(CART_REQUEST_NULL);
    ok(w.init(carts_[k], req.get()), std::string("init (") + kAlgorithms[k] + ")");
    char* json = nullptr;
    ok(Cart_request_plan(*req, &json), "Cart_request_plan");
    auto plan = cartplan::ir::plan_from_json_string(json);
    Cart_free_plan_json(json);
    if (!plan) die("a request's plan does not parse: " + plan.error(), 3);
    Variant v{std::string("cart_") + kAlgorithms[k] + "_persistent", cartplan::ir::plan_shape(*plan), nullptr, nullptr,
              predicted_us(*plan, w.block_bytes())};
    v.run = [req] {
      ok(Cart_start(req.get()), "Cart_start");
      ok(Cart_wait(req.get()), "Cart_wait");
    };
    v.cleanup = [req] { Cart_request_free(req.get()); };
    return v;
  }

  // The linear loop, non-blocking and persistent, priced as the direct plan (its messages).
  void add_linear(Workload& w, std::vector<Variant>& out) const {
    const double direct = out[2].predicted_us;  // cart_direct_persistent
    out.push_back({"linear", "direct", [&w] { w.linear(); }, nullptr, direct});
    auto reqs = std::make_shared<std::vector<MPI_Request>>(w.linear_init());
    out.push_back({"linear_persistent", "direct",
                   [reqs] {
                     MPI_Startall(static_cast<int>(reqs->size()), reqs->data());
                     MPI_Waitall(static_cast<int>(reqs->size()), reqs->data(), MPI_STATUSES_IGNORE);
                   },
                   [reqs] {
                     for (MPI_Request& r : *reqs) MPI_Request_free(&r);
                   },
                   direct});
  }

  // The model's prediction of `plan`, lowered as the backend lowers it without Info.
  double predicted_us(const cartplan::ir::Plan& plan, const std::vector<std::int64_t>& block_bytes) const {
    cartplan::engine::PredictOptions options;
    options.lowering = cartplan::openmpi::lower_options(model_);
    options.placement = cartplan::engine::prices_placement(model_) ? placement_ : cartplan::engine::Placement{};  // as the backend
    return cartplan::engine::predict(plan, block_bytes, model_, grid_, options).total_us();
  }

  const Args& a_;
  const cartplan::engine::Neighborhood& nbh_;
  int np_ = 1;
  std::vector<int> dims_;
  std::vector<MPI_Comm> carts_;
  cartplan::engine::CostModel model_;
  std::optional<cartplan::engine::Grid> grid_;
  cartplan::engine::Placement placement_;  // backends/mpi/node_map.h
};

// A barrier (untimed: every variant starts from the same skew), the warm-up, then --iters
// back-to-back calls; the max over ranks of each rank's mean per call.
double time_variant(const Args& a, const Variant& v) {
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < a.warmup; ++i) v.run();
  const double t0 = MPI_Wtime();
  for (int i = 0; i < a.iters; ++i) v.run();
  double mine = (MPI_Wtime() - t0) * 1e6 / a.iters, worst = 0;
  MPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  return worst;
}

// One call started right after a barrier, timed from the moment the last rank entered it to the
// moment the last rank left it. Needs one clock for all ranks: SMPI's simulated clock is (this is
// NaN under other MPIs). Every call starts from the same state, so no steady state is involved;
// ranks that leave the barrier early may have sent before the last one enters, which this does
// not count (it can be lower than a perfectly synchronized start would give).
double time_synchronized(const Variant& v) {
#ifdef CARTPLAN_SMPI
  MPI_Barrier(MPI_COMM_WORLD);
  double t[2] = {MPI_Wtime(), 0}, last[2] = {0, 0};
  v.run();
  t[1] = MPI_Wtime();
  MPI_Reduce(t, last, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  return (last[1] - last[0]) * 1e6;
#else
  (void)v;
  return std::nan("");
#endif
}

bool wanted(const Args& a, const std::string& name) {
  if (a.only.empty()) return true;
  for (const std::string& o : a.only)
    if (o == name) return true;
  return false;
}

// One block size: every variant checked (on every rank; "OK" or "WRONG"), then timed.
bool run_size(const Args& a, Bench& b, const cartplan::engine::Neighborhood& nbh, int m) {
  int rank = 0, np = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  Workload w(a.op, nbh, m, b.comm());
  std::vector<Variant> vs = b.variants(w);
  bool all_right = true;
  for (const Variant& v : vs) {
    if (!wanted(a, v.name)) continue;
    w.clear_recv();
    v.run();
    int right = w.delivered() ? 1 : 0, everywhere = 0;
    MPI_Allreduce(&right, &everywhere, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    all_right = all_right && everywhere;
    const double us = time_variant(a, v), sync_us = time_synchronized(v);
    if (rank == 0)
      std::printf("%d %s %s %d %s %s %.3f %.3f %.3f %s\n", np, a.stencil.c_str(), a.op.c_str(), m, v.name.c_str(), v.algorithm.c_str(),
                  us, sync_us, v.predicted_us, everywhere ? "OK" : "WRONG");
  }
  for (Variant& v : vs)
    if (v.cleanup) v.cleanup();
  if (rank == 0) std::fflush(stdout);
  return all_right;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const Args a = parse(argc, argv);
  auto nbh = cartplan::engine::parse_spec(a.stencil);
  if (!nbh) die("--stencil " + a.stencil + ": " + nbh.error());
  bool all_right = true;
  {
    Bench b(a, *nbh);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
      std::string dims;
      for (int k : b.dims()) dims += (dims.empty() ? "" : "x") + std::to_string(k);
      std::printf("# process grid %s, periodic %d, %d timed calls after %d warm-up per variant\n", dims.c_str(), a.periodic, a.iters,
                  a.warmup);
      std::printf("# np stencil op m variant algorithm us sync_us predicted_us check\n");
    }
    for (int m : a.ms) all_right = run_size(a, b, *nbh, m) && all_right;
  }
  MPI_Finalize();
  return all_right ? 0 : 1;
}
