// The bounded list of recorded Cartesian grids.
#include "backends/interpose/cart_records.h"

#include <deque>
#include <numeric>

namespace cartplan::interpose {
namespace {

struct Record {
  std::vector<int> dims, periods;
  MPI_Group group = MPI_GROUP_NULL;  // in the Cartesian communicator's rank order
};

constexpr std::size_t kKept = 8;

std::deque<Record>& records() {
  static std::deque<Record> r;
  return r;
}

}  // namespace

void record_cart(MPI_Comm cart) {
  if (cart == MPI_COMM_NULL) return;
  int d = 0;
  if (PMPI_Cartdim_get(cart, &d) != MPI_SUCCESS || d < 1) return;
  Record r;
  r.dims.resize(d);
  r.periods.resize(d);
  std::vector<int> coords(d);
  if (PMPI_Cart_get(cart, d, r.dims.data(), r.periods.data(), coords.data()) != MPI_SUCCESS) return;
  if (PMPI_Comm_group(cart, &r.group) != MPI_SUCCESS) return;
  for (int& p : r.periods) p = p ? 1 : 0;
  auto& list = records();
  list.push_front(std::move(r));
  while (list.size() > kKept) {
    PMPI_Group_free(&list.back().group);
    list.pop_back();
  }
}

std::optional<CartGrid> find_cart(MPI_Comm comm) {
  MPI_Group group = MPI_GROUP_NULL;
  if (PMPI_Comm_group(comm, &group) != MPI_SUCCESS) return std::nullopt;
  int size = 0;
  PMPI_Group_size(group, &size);
  std::optional<CartGrid> found;
  for (const Record& r : records()) {
    int result = MPI_UNEQUAL;
    PMPI_Group_compare(group, r.group, &result);
    if (result != MPI_IDENT && result != MPI_SIMILAR) continue;
    CartGrid g{r.dims, r.periods, std::vector<int>(size)};
    std::vector<int> ranks(size);
    std::iota(ranks.begin(), ranks.end(), 0);
    if (PMPI_Group_translate_ranks(group, size, ranks.data(), r.group, g.grid_rank.data()) != MPI_SUCCESS) continue;
    found = std::move(g);
    break;
  }
  PMPI_Group_free(&group);
  return found;
}

void clear_carts() {
  for (Record& r : records()) PMPI_Group_free(&r.group);
  records().clear();
}

}  // namespace cartplan::interpose
