// The agreement on a halo exchange's fields (halo_fields.h): their count, element sizes and the
// sum the plan is priced for, checked locally and compared across ranks with one MAX reduction.
#include "backends/mpi/halo_fields.h"

#include <limits>

#include "backends/mpi/exchange_settle.h"

namespace cartplan::mpi {
namespace {

// FNV-1a over the sizes after the first kExactSizes, in order (non-negative, so that its
// negation is representable; 0 where there are none).
std::int64_t rest_fingerprint(const std::vector<std::int64_t>& bytes) {
  if (bytes.size() <= kExactSizes) return 0;
  std::uint64_t h = 14695981039346656037ull;
  for (std::size_t f = kExactSizes; f < bytes.size(); ++f)
    for (int k = 0; k < 8; ++k) h = (h ^ ((static_cast<std::uint64_t>(bytes[f]) >> (8 * k)) & 0xff)) * 1099511628211ull;
  return static_cast<std::int64_t>(h >> 1);
}

std::string join(const std::vector<std::int64_t>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

}  // namespace

MpiStatus check_arrays(const std::vector<void*>& arrays) {
  for (std::size_t f = 0; f < arrays.size(); ++f) {
    const std::string which = arrays.size() == 1 ? "array" : "arrays[" + std::to_string(f) + "]";
    // MPI_BOTTOM is NULL in Open MPI, (void*)-111 in SMPI: neither is an array's address.
    if (!arrays[f] || arrays[f] == MPI_BOTTOM) return mpi_error(MPI_ERR_BUFFER, which + " is NULL or MPI_BOTTOM (the array's address is needed)");
    if (arrays[f] == MPI_IN_PLACE) return mpi_error(MPI_ERR_BUFFER, which + " is MPI_IN_PLACE (the array's address is needed)");
  }
  if (arrays.empty()) return mpi_error(MPI_ERR_ARG, "no array to exchange");
  return {};
}

MpiStatus field_sizes(const std::vector<void*>& arrays, const std::vector<MPI_Datatype>& types, std::int64_t own,
                      FieldSizes* out) {
  if (MpiStatus s = check_arrays(arrays); !s.ok()) return s;
  out->bytes.assign(arrays.size(), own);
  out->sum = 0;
  for (std::size_t f = 0; f < arrays.size(); ++f) {
    MPI_Count size = 0;
    if (!types.empty() && (types[f] == MPI_DATATYPE_NULL || MPI_Type_size_x(types[f], &size) != MPI_SUCCESS || size <= 0))
      return mpi_error(MPI_ERR_TYPE, "types[" + std::to_string(f) + "] is MPI_DATATYPE_NULL or holds no data");
    if (!types.empty()) out->bytes[f] = size;
    out->sum += out->bytes[f];
  }
  return {};
}

std::array<std::int64_t, kFieldWords> field_words(const MpiStatus& local, const FieldSizes& f) {
  std::array<std::int64_t, kFieldWords> w;
  if (!local.ok()) {  // the error decides; the other words take no part
    w.fill(std::numeric_limits<std::int64_t>::min());
    w[0] = local.code;
    return w;
  }
  w.fill(0);  // a field past the count: size 0 (counts that differ are caught before)
  const std::int64_t n = static_cast<std::int64_t>(f.bytes.size()), fp = rest_fingerprint(f.bytes);
  w[1] = n, w[2] = -n, w[3] = f.sum, w[4] = -f.sum;
  for (std::size_t k = 0; k < kExactSizes && k < f.bytes.size(); ++k) w[5 + 2 * k] = f.bytes[k], w[6 + 2 * k] = -f.bytes[k];
  w[kFieldWords - 2] = fp, w[kFieldWords - 1] = -fp;
  return w;
}

MpiStatus fields_agreed(const MpiStatus& local, const std::int64_t* all, const FieldSizes& f, const std::string& call) {
  if (all[0] != 0) return agreed_error(local, static_cast<int>(all[0]));
  const std::string rule = "; every rank must pass the same number of fields, in the same order, with element types of the same sizes";
  if (all[1] != -all[2])
    return agreed_status(mpi_error(MPI_ERR_TRUNCATE, call + ": the number of fields differs between ranks (min " +
                                                         std::to_string(-all[2]) + ", max " + std::to_string(all[1]) + ")" + rule));
  if (all[3] != -all[4])
    return agreed_status(mpi_error(MPI_ERR_TRUNCATE, call + ": the fields' element sizes add up to different sums on different ranks (min " +
                                                         std::to_string(-all[4]) + ", max " + std::to_string(all[3]) +
                                                         " bytes per cell; here " + join(f.bytes) + ")" + rule));
  std::string where;
  for (std::size_t k = 0; k < kExactSizes && where.empty(); ++k)
    if (all[5 + 2 * k] != -all[6 + 2 * k])
      where = "field " + std::to_string(k) + ": min " + std::to_string(-all[6 + 2 * k]) + ", max " + std::to_string(all[5 + 2 * k]) + " bytes";
  if (where.empty() && all[kFieldWords - 2] != -all[kFieldWords - 1]) where = "past field " + std::to_string(kExactSizes - 1);
  if (!where.empty())
    return agreed_status(mpi_error(MPI_ERR_TRUNCATE, call + ": the fields' element sizes differ between ranks (" + where +
                                                         "; the same number of fields and the same sum, other sizes in order; here " +
                                                         join(f.bytes) + " bytes)" + rule));
  return {};
}

MpiStatus agree_on_fields(NeighborhoodComm& nc, const MpiStatus& local, const FieldSizes& f, const std::string& call) {
  const std::array<std::int64_t, kFieldWords> mine = field_words(local, f);
  std::vector<std::int64_t> all;
  std::vector<std::uint64_t> held;
  MpiStatus s = agree_on(nc, false, std::vector<std::int64_t>(mine.begin(), mine.end()), &all, &held);
  return s.ok() ? fields_agreed(local, all.data(), f, call) : s;
}

}  // namespace cartplan::mpi
