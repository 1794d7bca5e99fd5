// Graph message layouts over MPI_BOTTOM and the arrival check of a receive.
#include "backends/mpi/graph_layout.h"

#include <climits>
#include <string>

#include "backends/mpi/exchange.h"

namespace cartplan::mpi {

MpiStatus message_layout(const std::vector<BlockSpec>& parts, std::vector<MPI_Datatype>* owned, MessageLayout* out) {
  std::vector<int> lengths;
  std::vector<MPI_Aint> displs;
  std::vector<MPI_Datatype> types;
  for (const BlockSpec& spec : parts) {
    MPI_Datatype type = spec.type;
    int count = static_cast<int>(spec.count);
    if (spec.count > INT_MAX) {
      MpiStatus s = large_count_type(spec.count, spec.type, &type);
      if (!s.ok()) return s;
      owned->push_back(type);
      count = 1;
    }
    if (parts.size() == 1) {
      *out = MessageLayout{const_cast<void*>(spec.addr), count, type};
      return {};
    }
    MPI_Aint addr = 0;
    CARTPLAN_MPI_CALL(MPI_Get_address(spec.addr, &addr));
    lengths.push_back(count);
    displs.push_back(addr);
    types.push_back(type);
  }
  MPI_Datatype whole = MPI_DATATYPE_NULL;
  CARTPLAN_MPI_CALL(MPI_Type_create_struct(static_cast<int>(lengths.size()), lengths.data(), displs.data(), types.data(), &whole));
  owned->push_back(whole);
  CARTPLAN_MPI_CALL(MPI_Type_commit(&owned->back()));
  *out = MessageLayout{MPI_BOTTOM, 1, whole};
  return {};
}

std::int64_t received_bytes(const MPI_Status& st) {
  MPI_Status copy = st;  // SMPI's MPI_Get_count takes a non-const status
#ifdef CARTPLAN_SMPI
  int n = 0;  // SMPI 3.32 aborts in MPI_Get_elements_x ("Not yet implemented")
  MPI_Get_count(&copy, MPI_BYTE, &n);
  return n;
#else
  MPI_Count got = 0;
  MPI_Get_elements_x(&copy, MPI_BYTE, &got);
  return got;
#endif
}

MpiStatus arrival_error(bool recv, int phase, int peer, std::int64_t bytes, const MPI_Status& st, bool error_valid) {
  const int error = error_valid ? st.MPI_ERROR : MPI_SUCCESS;
  if (!recv) return error == MPI_SUCCESS ? MpiStatus{} : from_mpi(error, "a send");
  // Checked before any text is made: every receive of every exchange passes here.
  const std::int64_t got = error == MPI_SUCCESS ? received_bytes(st) : -1;
  if (error == MPI_SUCCESS && got == bytes) return {};
  const std::string where = "phase " + std::to_string(phase) + ": the message from rank " + std::to_string(peer);
  if (error == MPI_ERR_TRUNCATE)
    return mpi_error(MPI_ERR_TRUNCATE, where + " is larger than expected; every block must have the same size (type signature) on every rank");
  if (error != MPI_SUCCESS) return from_mpi(error, where.c_str());
  return mpi_error(MPI_ERR_TRUNCATE, where + " brought " + std::to_string(got) + " bytes, " + std::to_string(bytes) +
                                         " expected; every block must have the same size (type signature) on every rank");
}

}  // namespace cartplan::mpi
