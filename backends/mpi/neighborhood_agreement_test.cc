// Tests for the creation agreement's description and its message, without MPI: what is in the
// description, and that the difference named is the first one.
#include "backends/mpi/neighborhood_agreement.h"
#include "backends/mpi/info_options.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace cartplan::mpi {
namespace {

struct Args {
  std::vector<int> dims{4, 3}, periods{1, 0};
  std::vector<int> rel{1, 0, 0, 1, -1, 0};  // t = 3 offsets of d = 2
  Options options;
  std::vector<std::int64_t> describe() const {
    return creation_description(2, dims.data(), periods.data(), 3, rel.data(), options);
  }
};

std::string differ(const Args& mine, const Args& root) {
  return description_difference(mine.describe(), root.describe(), 2, 3);
}

TEST_CASE("equal arguments give equal descriptions") {
  Args a, b;
  CHECK(a.describe() == b.describe());
}

TEST_CASE("the difference named is the first one") {
  const Args root;
  Args a = root;
  a.dims[1] = 5;
  CHECK(differ(a, root) == "dims[1] differs: 5 here, 3 on rank 0");
  a = root;
  a.periods[0] = 0;
  CHECK(differ(a, root) == "periods[0] differs from rank 0");
  a = root;
  a.rel[3] = 2;
  CHECK(differ(a, root) == "offset 1 differs: (0,2) here, (0,1) on rank 0");
  a = root;
  a.options.model.beta_us_per_byte *= 1.0000001;  // bit-identical, not nearly equal
  CHECK(a.describe() != root.describe());
  CHECK(differ(a, root).find("the Info options") == 0);
}

TEST_CASE("every term of the cost model's table and the eager limit are in the description") {
  // Ranks whose models differ in any price could choose different plans: the agreement takes
  // every price from engine::kCostTerms, so a new term is agreed on without touching this code.
  const Args root;
  for (const engine::CostTerm& t : engine::kCostTerms) {
    CAPTURE(t.name);
    Args a = root;
    a.options.model.*t.price += 0.25;
    CHECK(a.describe() != root.describe());
  }
  Args a = root;
  a.options.model.eager_limit_bytes += 1;
  CHECK(a.describe() != root.describe());
}

TEST_CASE("phase_overlap, not a row of the table, is agreed and fingerprinted") {
  // It changes the plan like a price (docs/cost-model.md, "Phase overlap"), so ranks must agree on
  // it, and a cached plan or a placement model's fingerprint must not survive a change of it alone.
  const Args root;
  Args a = root;
  a.options.model.phase_overlap = 0.5;
  CHECK(a.describe() != root.describe());
  CHECK(model_prices(a.options.model) != model_prices(root.options.model));  // halo.cc's model_fingerprint
  CHECK(options_fingerprint(a.options) != options_fingerprint(root.options));
}

TEST_CASE("d and t differ") {
  const Args root;
  const Args mine;
  const std::vector<int> rel3{1, 0, 0, 0, 1, 0, 0, 0, 1};
  const std::vector<std::int64_t> d3 =
      creation_description(3, std::vector<int>{4, 3, 2}.data(), std::vector<int>{1, 0, 1}.data(), 3, rel3.data(),
                           Options{});
  CHECK(description_difference(d3, root.describe(), 3, 3) == "d differs: 3 here, 2 on rank 0");
  const std::vector<std::int64_t> t2 = creation_description(2, mine.dims.data(), mine.periods.data(), 2, mine.rel.data(),
                                                            Options{});
  CHECK(description_difference(t2, root.describe(), 2, 2) == "the neighbourhood size t differs: 2 here, 3 on rank 0");
}

TEST_CASE("options that change what runs are in the description") {
  const Args root;
  Args a = root;
  a.options.algo = engine::AlgoChoice::kDirect;
  CHECK(a.describe() != root.describe());
  a = root;
  a.options.tune_measure = true;
  CHECK(a.describe() != root.describe());
  a = root;
  a.options.trailer_min_bytes = 4096;
  CHECK(a.describe() != root.describe());
  a = root;
  a.options.struct_min_bytes = 1;  // local: sender and receiver may differ
  CHECK(a.describe() == root.describe());
}

}  // namespace
}  // namespace cartplan::mpi
