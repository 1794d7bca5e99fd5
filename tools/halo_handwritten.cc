// The hand-written dimension-by-dimension halo exchange of tools/halo (halo_handwritten.h).
#include "tools/halo_handwritten.h"

#include "backends/mpi/cartplan_mpi.h"

namespace halo_tool {

namespace {

// Tags of this exchange, apart from the other variants' (which use 0..26): a message towards
// side s of dimension j has tag kTagBase + 2j + s, so the two messages of a periodic dimension of
// two processes (both to the same rank) still meet their own receives.
constexpr int kTagBase = 1000;

// The subarray of the slab of phase `phase` (dimension j = order[phase]) starting at `at` in
// dimension j: the whole array in the dimensions of earlier phases, the interior in later ones.
// m: this rank's interior. The neighbour's face matches in size: it shares every extent but j's
// (a block decomposition), and spans k cells in j.
MPI_Datatype slab(const std::vector<int>& m, int k, const std::vector<int>& order, int phase, int at) {
  const int d = static_cast<int>(m.size());
  std::vector<int> sizes(d), sub(d), start(d);
  for (int q = 0; q < d; ++q) {
    const int i = order[q];
    sizes[i] = m[i] + 2 * k;
    sub[i] = q < phase ? m[i] + 2 * k : q == phase ? k : m[i];
    start[i] = q < phase ? 0 : q == phase ? at : k;
  }
  MPI_Datatype t = MPI_DATATYPE_NULL;
  MPI_Type_create_subarray(d, sizes.data(), sub.data(), start.data(), MPI_ORDER_C, MPI_DOUBLE, &t);
  MPI_Type_commit(&t);
  return t;
}

}  // namespace

HandWritten::HandWritten(MPI_Comm cart, const std::vector<int>& m, int k, const std::vector<int>& order)
    : comm_(cart), d_(static_cast<int>(m.size())), sides_(m.size()) {
  const int d = d_;
  int me = 0;
  MPI_Comm_rank(cart, &me);
  for (int q = 0; q < d; ++q)
    for (int s = 0; s < 2; ++s) {
      const int j = order[q];
      Side& side = sides_[q][s];
      std::vector<int> towards(d, 0);
      towards[j] = s == 0 ? -1 : 1;
      // peer = self + towards gets the interior slab next to side s; source = self - towards
      // sends its own slab next to side s (the same tag), which lands in the ghost slab on the
      // side opposite s.
      Cart_relative_shift(cart, towards.data(), &side.source, &side.peer);
      side.face = slab(m, k, order, q, s == 0 ? k : m[j]);
      side.ghost = slab(m, k, order, q, s == 0 ? m[j] + k : 0);
      if (side.peer != MPI_PROC_NULL && side.peer != me) {  // bytes to other ranks
        int size = 0;
        MPI_Type_size(side.face, &size);
        bytes_ += size;
      }
    }
}

HandWritten::~HandWritten() {
  for (auto& dim : sides_)
    for (Side& s : dim) {
      MPI_Type_free(&s.face);
      MPI_Type_free(&s.ghost);
    }
}

void HandWritten::exchange(double* array) {
  MPI_Request reqs[4];
  for (int j = 0; j < d_; ++j) {
    for (int s = 0; s < 2; ++s)
      MPI_Irecv(array, 1, sides_[j][s].ghost, sides_[j][s].source, kTagBase + 2 * j + s, comm_, &reqs[s]);
    for (int s = 0; s < 2; ++s)
      MPI_Isend(array, 1, sides_[j][s].face, sides_[j][s].peer, kTagBase + 2 * j + s, comm_, &reqs[2 + s]);
    // The next dimension's faces include the ghost cells received here.
    MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE);
  }
}

}  // namespace halo_tool
