// Setup-time benchmark (seed 002 Figs. 2-3): cartplan neighbourhood creation and persistent-request init vs. plain MPI.
//
// For each neighbourhood (default: von Neumann r=1 and Moore r=3 in 2-D without the zero offset,
// and box:d=3,n=3,f=-1) on a periodic grid from MPI_Dims_create(np, d), the variants below are
// timed in a seeded random order that is identical on every rank (they are collective), each
// after an MPI_Barrier; a repetition's time is the maximum over ranks. Whatever a variant
// creates is freed after the clock stops, so freeing is never timed.
//
//   creation (ratio = median / median of mpi_cart_plus_adjacent):
//     cart_create               Cart_neighborhood_create (its MPI_Cart_create, agreement, isomorphism check)
//     mpi_cart_plus_adjacent    MPI_Cart_create + neighbour ranks by MPI_Cart_rank + MPI_Dist_graph_create_adjacent
//     mpi_cart_plus_dist_graph  MPI_Cart_create + target ranks by MPI_Cart_rank + MPI_Dist_graph_create (own out-edges)
//     raw_dist_graph_adjacent   MPI_Dist_graph_create_adjacent on an existing Cartesian communicator
//   persistent-request setup (ratio = median / median of the mpix_ variant with the same op and m):
//     cart_<op>_init_<algo>_m<M>         Cart_<op>_init on a fresh cartplan communicator (made untimed), i.e. the
//                                        first request of a communicator: planning, binding, datatypes, requests
//     cart_<op>_init_<algo>_m<M>_cached  the same on a long-lived communicator, whose plan cache already holds
//                                        the plan: what every later request costs
//     mpix_<op>_init_m<M>                MPIX_Neighbor_<op>_init on a distributed graph of the same neighbourhood
//
//   mpirun -np 4 setup_bench --reps 30 --warmup 3 --csv setup.csv [--stencil SPEC ...] [--seed S]
#include <mpi.h>
#include <mpi-ext.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "backends/mpi/cartplan_mpi.h"
#include "bench/bench_util.h"
#include "engine/spec.h"

namespace {

using cartplan::bench::Summary;
using cartplan::bench::summarize;

struct Args {
  // Zero excluded (shadow = 1): the brief's 4- and 48-neighbourhoods. The moore:/vonneumann:
  // generators include the zero offset, so the chebyshev/manhattan forms are used instead.
  std::vector<std::string> stencils;
  int reps = 30, warmup = 3;
  unsigned seed = 1;
  std::string csv;
};

void die(const std::string& msg) {
  std::fprintf(stderr, "setup_bench: %s\n", msg.c_str());
  MPI_Abort(MPI_COMM_WORLD, 2);
}

void ok(int rc, const char* what) {
  if (rc != MPI_SUCCESS) die(std::string(what) + " failed: " + Cart_error_message());
}

void mpi_ok(int rc, const char* what) {
  if (rc != MPI_SUCCESS) die(std::string(what) + " failed with MPI error " + std::to_string(rc));
}

// One measured call sequence. prepare and release run outside the timed region (before the
// barrier and after the clock stops), so they may create or free whatever the run needs.
struct Variant {
  std::string name;
  std::string baseline;  // name of the variant the ratio is taken against
  std::function<void()> prepare, run, release;
};

class Bench {
 public:
  explicit Bench(const Args& a) : args_(a) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &np_);
    if (rank_ == 0 && !a.csv.empty()) {
      csv_.open(a.csv);
      if (!csv_) die("cannot write " + a.csv);
      csv_ << "np,neighborhood,t,variant,reps,median_us,q1_us,q3_us,lowq_mean_us,tukey_mean_us,outliers,ratio\n";
    }
    for (const char* algo : {"direct", "combining"}) {
      MPI_Info info;
      MPI_Info_create(&info);
      MPI_Info_set(info, "cartplan_algorithm", algo);
      infos_.push_back(info);
    }
  }
  ~Bench() {
    for (MPI_Info& i : infos_) MPI_Info_free(&i);
  }

  void run_stencil(const std::string& spec, int index) {
    auto nbh = cartplan::engine::parse_spec(spec);
    if (!nbh) die("--stencil " + spec + ": " + nbh.error());
    d_ = nbh->ndims();
    t_ = nbh->size();
    dims_.assign(d_, 0);
    periods_.assign(d_, 1);
    offsets_.clear();
    MPI_Dims_create(np_, d_, dims_.data());
    for (const auto& o : nbh->offsets()) offsets_.insert(offsets_.end(), o.begin(), o.end());

    // Long-lived communicators the "on an existing communicator" variants work on.
    MPI_Comm mpi_cart, cart, graph;
    mpi_ok(MPI_Cart_create(MPI_COMM_WORLD, d_, dims_.data(), periods_.data(), 0, &mpi_cart), "MPI_Cart_create");
    std::vector<int> sources(t_), targets(t_);
    user_ranks(mpi_cart, sources.data(), targets.data());
    ok(Cart_neighborhood_create(MPI_COMM_WORLD, d_, dims_.data(), periods_.data(), t_, offsets_.data(), MPI_UNWEIGHTED,
                                MPI_INFO_NULL, 0, &cart),
       "Cart_neighborhood_create");
    check_same_neighbours(cart, sources, targets);
    mpi_ok(MPI_Dist_graph_create_adjacent(mpi_cart, t_, sources.data(), MPI_UNWEIGHTED, t_, targets.data(), MPI_UNWEIGHTED,
                                          MPI_INFO_NULL, 0, &graph),
           "MPI_Dist_graph_create_adjacent");

    const int max_m = 100;
    send_.assign(static_cast<std::size_t>(t_) * max_m, rank_);
    recv_.assign(static_cast<std::size_t>(t_) * max_m, -1);

    std::vector<Variant> vs;
    add_creation_variants(vs, mpi_cart, sources, targets);
    add_init_variants(vs, cart, graph);

    // Same seed on every rank, hence the same order: the variants are collective.
    std::mt19937 rng(args_.seed * 1000003u + static_cast<unsigned>(index));
    const std::size_t nv = vs.size();
    std::vector<std::size_t> order(nv);
    for (std::size_t v = 0; v < nv; ++v) order[v] = v;
    std::vector<double> times(nv), maxed(nv);
    std::vector<std::vector<double>> samples(nv);
    for (int rep = 0; rep < args_.warmup + args_.reps; ++rep) {
      std::shuffle(order.begin(), order.end(), rng);
      for (std::size_t v : order) {
        if (vs[v].prepare) vs[v].prepare();
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        vs[v].run();
        times[v] = (MPI_Wtime() - t0) * 1e6;
        if (vs[v].release) vs[v].release();
      }
      // A collective setup is done when its slowest rank is done.
      MPI_Allreduce(times.data(), maxed.data(), static_cast<int>(nv), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (rep >= args_.warmup)
        for (std::size_t v = 0; v < nv; ++v) samples[v].push_back(maxed[v]);
    }

    MPI_Comm_free(&graph);
    MPI_Comm_free(&cart);
    MPI_Comm_free(&mpi_cart);
    report(spec, vs, samples);
  }

 private:
  // Source (-offset) and target (+offset) ranks as a user of plain MPI finds them: own
  // coordinates, shifted, through MPI_Cart_rank (which wraps periodic dimensions).
  void user_ranks(MPI_Comm mpi_cart, int* sources, int* targets) const {
    int me = 0;
    MPI_Comm_rank(mpi_cart, &me);
    std::vector<int> c(d_), x(d_);
    MPI_Cart_coords(mpi_cart, me, d_, c.data());
    for (int i = 0; i < t_; ++i) {
      const int* o = &offsets_[static_cast<std::size_t>(i) * d_];
      if (targets) {
        for (int k = 0; k < d_; ++k) x[k] = c[k] + o[k];
        MPI_Cart_rank(mpi_cart, x.data(), &targets[i]);
      }
      if (sources) {
        for (int k = 0; k < d_; ++k) x[k] = c[k] - o[k];
        MPI_Cart_rank(mpi_cart, x.data(), &sources[i]);
      }
    }
  }

  // The MPI variants must build the neighbourhood cartplan builds, or the comparison is void.
  void check_same_neighbours(MPI_Comm cart, const std::vector<int>& sources, const std::vector<int>& targets) const {
    std::vector<int> s(t_), t(t_);
    ok(Cart_neighbor_get(cart, t_, s.data(), MPI_UNWEIGHTED, t_, t.data(), MPI_UNWEIGHTED), "Cart_neighbor_get");
    if (s != sources || t != targets) die("MPI_Cart_rank and Cart_neighbor_get disagree on rank " + std::to_string(rank_));
  }

  void add_creation_variants(std::vector<Variant>& vs, MPI_Comm mpi_cart, const std::vector<int>& sources,
                             const std::vector<int>& targets) {
    // Handles created by a run, freed by its release.
    auto freed = [this]() {
      for (MPI_Comm* c : {&c1_, &c2_})
        if (*c != MPI_COMM_NULL) MPI_Comm_free(c);
    };
    const std::string base = "mpi_cart_plus_adjacent";
    vs.push_back({"cart_create", base, nullptr,
                  [this]() {
                    ok(Cart_neighborhood_create(MPI_COMM_WORLD, d_, dims_.data(), periods_.data(), t_, offsets_.data(),
                                                MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c1_),
                       "Cart_neighborhood_create");
                  },
                  freed});
    vs.push_back({base, base, nullptr,
                  [this]() {
                    MPI_Cart_create(MPI_COMM_WORLD, d_, dims_.data(), periods_.data(), 0, &c1_);
                    std::vector<int> s(t_), t(t_);
                    user_ranks(c1_, s.data(), t.data());
                    MPI_Dist_graph_create_adjacent(c1_, t_, s.data(), MPI_UNWEIGHTED, t_, t.data(), MPI_UNWEIGHTED,
                                                   MPI_INFO_NULL, 0, &c2_);
                  },
                  freed});
    vs.push_back({"mpi_cart_plus_dist_graph", base, nullptr,
                  [this]() {
                    MPI_Cart_create(MPI_COMM_WORLD, d_, dims_.data(), periods_.data(), 0, &c1_);
                    std::vector<int> t(t_);
                    user_ranks(c1_, nullptr, t.data());
                    int me = 0;
                    MPI_Comm_rank(c1_, &me);
                    // One source (this rank) with all its out-edges: MPI must redistribute the
                    // edges to learn the in-edges, which the adjacent form is told.
                    MPI_Dist_graph_create(c1_, 1, &me, &t_, t.data(), MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c2_);
                  },
                  freed});
    vs.push_back({"raw_dist_graph_adjacent", base, nullptr,
                  [this, mpi_cart, sources, targets]() {
                    MPI_Dist_graph_create_adjacent(mpi_cart, t_, sources.data(), MPI_UNWEIGHTED, t_, targets.data(),
                                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c2_);
                  },
                  freed});
  }

  void add_init_variants(std::vector<Variant>& vs, MPI_Comm cart, MPI_Comm graph) {
    struct Case {
      const char* op;
      int info;  // index into infos_: 0 direct, 1 combining
    };
    const Case cases[] = {{"alltoall", 0}, {"alltoall", 1}, {"allgather", 1}};
    const char* algo_names[] = {"direct", "combining"};
    for (int m : {1, 100}) {
      for (const char* op : {"alltoall", "allgather"}) {
        const bool gather = std::string(op) == "allgather";
        vs.push_back({"mpix_" + std::string(op) + "_init_m" + std::to_string(m), "", nullptr,
                      [this, graph, m, gather]() {
                        const int rc = gather ? MPIX_Neighbor_allgather_init(send_.data(), m, MPI_INT, recv_.data(), m,
                                                                             MPI_INT, graph, MPI_INFO_NULL, &mpix_req_)
                                              : MPIX_Neighbor_alltoall_init(send_.data(), m, MPI_INT, recv_.data(), m,
                                                                            MPI_INT, graph, MPI_INFO_NULL, &mpix_req_);
                        mpi_ok(rc, "MPIX_Neighbor_*_init");
                      },
                      [this]() { MPI_Request_free(&mpix_req_); }});
        vs.back().baseline = vs.back().name;
      }
      for (const Case& c : cases) {
        const bool gather = std::string(c.op) == "allgather";
        const std::string name = "cart_" + std::string(c.op) + "_init_" + algo_names[c.info] + "_m" + std::to_string(m);
        const std::string base = "mpix_" + std::string(c.op) + "_init_m" + std::to_string(m);
        check_algorithm(cart, gather, m, c.info);
        MPI_Info info = infos_[c.info];
        auto init = [this, gather, m, info](MPI_Comm comm) {
          ok(gather ? Cart_allgather_init(send_.data(), m, MPI_INT, recv_.data(), m, MPI_INT, comm, info, &cart_req_)
                    : Cart_alltoall_init(send_.data(), m, MPI_INT, recv_.data(), m, MPI_INT, comm, info, &cart_req_),
             "Cart_*_init");
        };
        // First request on a communicator: a fresh one per repetition keeps its plan cache empty.
        vs.push_back({name, base,
                      [this]() {
                        ok(Cart_neighborhood_create(MPI_COMM_WORLD, d_, dims_.data(), periods_.data(), t_, offsets_.data(),
                                                    MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c1_),
                           "Cart_neighborhood_create");
                      },
                      [this, init]() { init(c1_); },
                      [this]() {
                        ok(Cart_request_free(&cart_req_), "Cart_request_free");
                        MPI_Comm_free(&c1_);
                      }});
        vs.push_back({name + "_cached", base, nullptr, [init, cart]() { init(cart); },
                      [this]() { ok(Cart_request_free(&cart_req_), "Cart_request_free"); }});
      }
    }
  }

  // The Info key must really select the algorithm, or the direct/combining rows are mislabeled.
  void check_algorithm(MPI_Comm cart, bool gather, int m, int want_combining) {
    Cart_Request r = CART_REQUEST_NULL;
    MPI_Info info = infos_[want_combining];
    ok(gather ? Cart_allgather_init(send_.data(), m, MPI_INT, recv_.data(), m, MPI_INT, cart, info, &r)
              : Cart_alltoall_init(send_.data(), m, MPI_INT, recv_.data(), m, MPI_INT, cart, info, &r),
       "Cart_*_init");
    int combining = -1;
    ok(Cart_request_algorithm(r, &combining), "Cart_request_algorithm");
    ok(Cart_request_free(&r), "Cart_request_free");
    if (combining != want_combining) die("cartplan_algorithm Info key was not honoured");
  }

  void report(const std::string& spec, const std::vector<Variant>& vs, const std::vector<std::vector<double>>& samples) {
    if (rank_ != 0) return;
    std::vector<Summary> sums;
    for (const auto& s : samples) sums.push_back(summarize(s));
    auto median_of = [&](const std::string& name) {
      for (std::size_t v = 0; v < vs.size(); ++v)
        if (vs[v].name == name) return sums[v].median;
      return 0.0;
    };
    std::string dims;
    for (int k = 0; k < d_; ++k) dims += (k ? "x" : "") + std::to_string(dims_[k]);
    std::printf("== %s  np=%d grid=%s (periodic) t=%d reps=%d  [us, max over ranks]\n", spec.c_str(), np_, dims.c_str(), t_,
                args_.reps);
    std::printf("  %-38s %10s %10s %10s %10s %10s %4s %7s\n", "variant", "median", "q1", "q3", "lowq", "tukey", "out",
                "ratio");
    for (std::size_t v = 0; v < vs.size(); ++v) {
      const Summary& s = sums[v];
      const double base = median_of(vs[v].baseline);
      const double ratio = base > 0 ? s.median / base : 0.0;
      std::printf("  %-38s %10.1f %10.1f %10.1f %10.1f %10.1f %4d %7.2f\n", vs[v].name.c_str(), s.median, s.q1, s.q3,
                  s.low_quartile_mean, s.tukey_mean, s.outliers, ratio);
      if (csv_)
        csv_ << np_ << ",\"" << spec << "\"," << t_ << "," << vs[v].name << "," << s.n << "," << s.median << "," << s.q1 << ","
             << s.q3 << "," << s.low_quartile_mean << "," << s.tukey_mean << "," << s.outliers << "," << ratio << "\n";
    }
    std::fflush(stdout);
  }

  const Args& args_;
  int rank_ = 0, np_ = 1;
  std::ofstream csv_;
  std::vector<MPI_Info> infos_;
  // The current neighbourhood.
  int d_ = 0, t_ = 0;
  std::vector<int> dims_, periods_, offsets_;
  std::vector<int> send_, recv_;
  // Objects the running variant creates; its release frees them.
  MPI_Comm c1_ = MPI_COMM_NULL, c2_ = MPI_COMM_NULL;
  Cart_Request cart_req_ = CART_REQUEST_NULL;
  MPI_Request mpix_req_ = MPI_REQUEST_NULL;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) die("missing value for " + k);
      return argv[++i];
    };
    auto integer = [&](long long lo) {
      const std::string v = value();
      auto n = cartplan::bench::parse_int(v, lo, 1 << 30);
      if (!n) die("bad value for " + k + ": " + v);
      return static_cast<int>(*n);
    };
    if (k == "--stencil") a.stencils.push_back(value());
    else if (k == "--reps") a.reps = integer(1);
    else if (k == "--warmup") a.warmup = integer(0);
    else if (k == "--seed") a.seed = static_cast<unsigned>(integer(0));
    else if (k == "--csv") a.csv = value();
    else die("unknown option " + k + " (known: --reps, --warmup, --csv, --seed, --stencil)");
  }
  if (a.stencils.empty())
    a.stencils = {"manhattan:d=2,depth=1,shadow=1", "chebyshev:d=2,depth=3,shadow=1", "box:d=3,n=3,f=-1"};
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  {
    const Args a = parse(argc, argv);
    Bench b(a);
    for (std::size_t i = 0; i < a.stencils.size(); ++i) b.run_stencil(a.stencils[i], static_cast<int>(i));
  }
  MPI_Finalize();
  return 0;
}
