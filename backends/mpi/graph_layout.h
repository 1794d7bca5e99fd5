// One graph message's MPI layout (a block where it is, or one struct datatype over the absolute
// addresses of several blocks) and the check of what a receive brought; shared by GraphExchange
// (graph_exchange.h) and the blocking v calls that reuse their sizes (graph_sized_calls.h).
//
//   MessageLayout l;
//   MpiStatus s = message_layout({BlockSpec{a, 3, MPI_INT}, BlockSpec{b, 2, MPI_DOUBLE}}, &owned, &l);
//   MPI_Isend(l.buf, l.count, l.type, peer, tag, comm, &req);
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "backends/mpi/exchange_spec.h"
#include "backends/mpi/status.h"

namespace cartplan::mpi {

struct MessageLayout {
  void* buf = nullptr;
  int count = 0;
  MPI_Datatype type = MPI_BYTE;
};

// The layout of a message of `parts` (wire order): a single part where it is; several parts as
// one committed struct datatype over MPI_BOTTOM. A part of more than INT_MAX elements becomes
// one element of a chunked type. Datatypes it creates are appended to *owned (the caller frees them).
MpiStatus message_layout(const std::vector<BlockSpec>& parts, std::vector<MPI_Datatype>* owned, MessageLayout* out);

// The bytes a completed receive brought.
std::int64_t received_bytes(const MPI_Status& status);

// What a completed request of `phase` with `peer` says: ok, an MPI error, or MPI_ERR_TRUNCATE
// when a receive brought other than `bytes` bytes (a block size that differs between the ends
// of an edge), found by the receiving rank without any agreement.
MpiStatus arrival_error(bool recv, int phase, int peer, std::int64_t bytes, const MPI_Status& status, bool error_valid);

}  // namespace cartplan::mpi
