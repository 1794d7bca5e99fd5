// The agreement of Cart_neighborhood_create: every rank must pass the same neighbourhood, grid
// and options; rank 0's description is broadcast and every rank compares it with its own.
#include "backends/mpi/neighborhood_agreement.h"

#include <cstring>
#include <string>

namespace cartplan::mpi {

// Everything that must agree across ranks, flattened for one broadcast. Doubles travel as
// their bit patterns so that "the same" means bit-identical.
std::vector<std::int64_t> creation_description(int d, const int dims[], const int periods[], int t, const int rel[],
                                               const Options& o) {
  std::vector<std::int64_t> v;
  v.push_back(d);
  for (int k = 0; k < d; ++k) v.push_back(dims[k]);
  for (int k = 0; k < d; ++k) v.push_back(periods[k] ? 1 : 0);
  v.push_back(t);
  for (std::int64_t i = 0; i < std::int64_t{t} * d; ++i) v.push_back(rel[i]);
  v.push_back(static_cast<std::int64_t>(o.algo));
  v.push_back(o.dim_order ? 1 : 0);
  if (o.dim_order)
    for (int k : *o.dim_order) v.push_back(k);
  for (double price : model_prices(o.model)) {
    std::int64_t bits = 0;
    std::memcpy(&bits, &price, sizeof bits);
    v.push_back(bits);
  }
  v.push_back(o.check_collective ? 1 : 0);
  v.push_back(o.given_plan ? static_cast<std::int64_t>(o.given_plan->fingerprint >> 1) : -1);
  v.push_back(o.trailer_min_bytes ? *o.trailer_min_bytes : -2);
  v.push_back(o.tune_measure ? 1 : 0);
  return v;
}

// What differs between this rank's description and rank 0's, in words.
std::string description_difference(const std::vector<std::int64_t>& mine, const std::vector<std::int64_t>& root, int d, int t) {
  if (mine.empty() || root.empty() || mine[0] != root[0])
    return "d differs: " + std::to_string(d) + " here, " + std::to_string(root.empty() ? -1 : root[0]) + " on rank 0";
  for (int k = 0; k < d; ++k)
    if (mine[1 + k] != root[1 + k]) return "dims[" + std::to_string(k) + "] differs: " + std::to_string(mine[1 + k]) +
                                           " here, " + std::to_string(root[1 + k]) + " on rank 0";
  for (int k = 0; k < d; ++k)
    if (mine[1 + d + k] != root[1 + d + k]) return "periods[" + std::to_string(k) + "] differs from rank 0";
  const std::size_t tpos = 1 + 2 * static_cast<std::size_t>(d);
  if (mine[tpos] != root[tpos])
    return "the neighbourhood size t differs: " + std::to_string(t) + " here, " + std::to_string(root[tpos]) + " on rank 0";
  for (int i = 0; i < t; ++i) {
    bool same = true;
    std::string here = "(", there = "(";
    for (int k = 0; k < d; ++k) {
      const std::size_t at = tpos + 1 + static_cast<std::size_t>(i) * d + k;
      same = same && mine[at] == root[at];
      here += (k ? "," : "") + std::to_string(mine[at]);
      there += (k ? "," : "") + std::to_string(root[at]);
    }
    if (!same) return "offset " + std::to_string(i) + " differs: " + here + ") here, " + there + ") on rank 0";
  }
  return "the Info options (cartplan_algorithm, cartplan_dim_order, cartplan_alpha_us, cartplan_beta_us_per_byte, "
         "cartplan_cost_model, cartplan_check, cartplan_plan, cartplan_trailer_min_bytes, cartplan_tune), CARTPLAN_CHECK, CARTPLAN_TUNE or the cost model found "
         "(CARTPLAN_COST_MODEL, the default location) differ from rank 0";
}

// Isomorphism: rank 0's description against everyone's (O(t d) data, one broadcast).
MpiStatus agree_on_description(MPI_Comm comm, int d, const int dims[], const int periods[], int t, const int rel[],
                               const Options& options, const MpiStatus& local) {
  std::vector<std::int64_t> mine = creation_description(d, dims, periods, t, rel, options);
  std::int64_t root_len = static_cast<std::int64_t>(mine.size());
  CARTPLAN_MPI_CALL(MPI_Bcast(&root_len, 1, MPI_INT64_T, 0, comm));
  std::vector<std::int64_t> root = mine;
  root.resize(static_cast<std::size_t>(root_len));
  CARTPLAN_MPI_CALL(MPI_Bcast(root.data(), static_cast<int>(root_len), MPI_INT64_T, 0, comm));
  const int flags[2] = {root != mine ? 1 : 0, local.ok() ? 0 : local.code};
  int all[2] = {0, 0};
  CARTPLAN_MPI_CALL(MPI_Allreduce(flags, all, 2, MPI_INT, MPI_MAX, comm));
  if (all[0])
    return mpi_error(MPI_ERR_ARG, "ranks passed different neighbourhoods to Cart_neighborhood_create: " +
                                      (flags[0] ? description_difference(mine, root, d, t) : std::string("another rank differs from rank 0")));
  if (all[1] != 0)
    return agreed_status(mpi_error(all[1], local.ok() ? "another rank could not make its part of the neighbourhood (error class " +
                                                            std::to_string(all[1]) + " there)"
                                                      : local.message));
  return {};
}

}  // namespace cartplan::mpi
