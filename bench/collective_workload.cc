// Buffers, expected results, cartplan calls and the linear baseline of one collective (collective_bench).
#include "bench/collective_workload.h"

#include <algorithm>
#include <cmath>

namespace cartplan::bench {
namespace {

constexpr int kUntouched = -7;

// What element k of block i sent by `rank` holds: rank-, block- and position-dependent.
int value(int rank, int block, int k) {
  const std::uint32_t v = static_cast<std::uint32_t>(rank) * 1000003u + static_cast<std::uint32_t>(block) * 1009u + static_cast<std::uint32_t>(k);
  return static_cast<int>(v & 0x3fffffffu);
}

// The rank at coords + sign * offset, or MPI_PROC_NULL where it leaves a non-periodic dimension.
int shifted(MPI_Comm cart, const std::vector<int>& dims, const std::vector<int>& periods, const std::vector<int>& coords,
            const engine::Offset& o, int sign) {
  std::vector<int> c(coords.size());
  for (std::size_t k = 0; k < coords.size(); ++k) {
    int x = coords[k] + sign * o[k];
    if (x < 0 || x >= dims[k]) {
      if (!periods[k]) return MPI_PROC_NULL;
      x = ((x % dims[k]) + dims[k]) % dims[k];
    }
    c[k] = x;
  }
  int r = MPI_PROC_NULL;
  MPI_Cart_rank(cart, c.data(), &r);
  return r;
}

}  // namespace

Workload::Workload(const std::string& op, const engine::Neighborhood& nbh, int m, MPI_Comm cart)
    : op_(op), t_(nbh.size()), cart_(cart) {
  const int d = nbh.ndims();
  std::vector<int> dims(d), periods(d), coords(d);
  MPI_Cart_get(cart, d, dims.data(), periods.data(), coords.data());
  int me = 0;
  MPI_Comm_rank(cart, &me);
  int pos = 0;
  for (int i = 0; i < t_; ++i) {
    const engine::Offset& o = nbh[i];
    sources_.push_back(shifted(cart, dims, periods, coords, o, -1));
    targets_.push_back(shifted(cart, dims, periods, coords, o, +1));
    const int z = engine::Neighborhood::nonzeros(o);
    const int n = op != "alltoallv" ? m : z == 0 ? 0 : static_cast<int>(std::lround(std::pow(m, d - z)));
    counts_.push_back(n);
    displs_.push_back(pos);
    pos += n;
  }
  const bool gather = op == "allgather";
  send_.resize(gather ? m : pos);
  for (int i = 0; i < (gather ? 1 : t_); ++i)
    for (int k = 0; k < (gather ? m : counts_[i]); ++k) send_[(gather ? 0 : displs_[i]) + k] = value(me, i, k);
  recv_.assign(std::max(pos, 1), kUntouched);
  expected_ = recv_;
  for (int i = 0; i < t_; ++i)
    if (sources_[i] != MPI_PROC_NULL)
      for (int k = 0; k < counts_[i]; ++k) expected_[displs_[i] + k] = value(sources_[i], gather ? 0 : i, k);
}

int Workload::init(MPI_Comm c, Cart_Request* req) {
  const int m = counts_.empty() ? 0 : counts_[0];
  if (op_ == "alltoall") return Cart_alltoall_init(send_.data(), m, MPI_INT, recv_.data(), m, MPI_INT, c, MPI_INFO_NULL, req);
  if (op_ == "allgather") return Cart_allgather_init(send_.data(), m, MPI_INT, recv_.data(), m, MPI_INT, c, MPI_INFO_NULL, req);
  return Cart_alltoallv_init(send_.data(), counts_.data(), displs_.data(), MPI_INT, recv_.data(), counts_.data(), displs_.data(), MPI_INT,
                             c, MPI_INFO_NULL, req);
}

int Workload::blocking(MPI_Comm c) {
  const int m = counts_.empty() ? 0 : counts_[0];
  if (op_ == "alltoall") return Cart_alltoall(send_.data(), m, MPI_INT, recv_.data(), m, MPI_INT, c);
  if (op_ == "allgather") return Cart_allgather(send_.data(), m, MPI_INT, recv_.data(), m, MPI_INT, c);
  return Cart_alltoallv(send_.data(), counts_.data(), displs_.data(), MPI_INT, recv_.data(), counts_.data(), displs_.data(), MPI_INT, c);
}

void Workload::linear() {
  std::vector<MPI_Request> reqs(2 * static_cast<std::size_t>(t_));
  const bool gather = op_ == "allgather";
  int n = 0;
  for (int i = 0; i < t_; ++i)
    if (sources_[i] != MPI_PROC_NULL) MPI_Irecv(recv_.data() + displs_[i], counts_[i], MPI_INT, sources_[i], i, cart_, &reqs[n++]);
  for (int i = 0; i < t_; ++i)
    if (targets_[i] != MPI_PROC_NULL)
      MPI_Isend(send_.data() + (gather ? 0 : displs_[i]), counts_[i], MPI_INT, targets_[i], i, cart_, &reqs[n++]);
  MPI_Waitall(n, reqs.data(), MPI_STATUSES_IGNORE);
}

std::vector<MPI_Request> Workload::linear_init() {
  std::vector<MPI_Request> reqs;
  const bool gather = op_ == "allgather";
  for (int i = 0; i < t_; ++i)
    if (sources_[i] != MPI_PROC_NULL) {
      reqs.emplace_back();
      MPI_Recv_init(recv_.data() + displs_[i], counts_[i], MPI_INT, sources_[i], i, cart_, &reqs.back());
    }
  for (int i = 0; i < t_; ++i)
    if (targets_[i] != MPI_PROC_NULL) {
      reqs.emplace_back();
      MPI_Send_init(send_.data() + (gather ? 0 : displs_[i]), counts_[i], MPI_INT, targets_[i], i, cart_, &reqs.back());
    }
  return reqs;
}

void Workload::clear_recv() { std::fill(recv_.begin(), recv_.end(), kUntouched); }

bool Workload::delivered() const { return recv_ == expected_; }

std::vector<std::int64_t> Workload::block_bytes() const {
  std::vector<std::int64_t> b;
  for (int n : counts_) b.push_back(std::int64_t{4} * n);
  return b;
}

}  // namespace cartplan::bench
