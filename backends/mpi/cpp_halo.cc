// The C++ halo API (cartplan.hpp: Halo, HaloRequest): RAII and exceptions over HaloContext.
#include <string>
#include <utility>
#include <vector>

#include "backends/mpi/cartplan.hpp"
#include "backends/mpi/cpp_throw.h"
#include "backends/mpi/exchange.h"
#include "backends/mpi/halo.h"
#include "ir/halo/json.h"

namespace cartplan::mpi {
namespace {

// What the halo is given in place of types of the wrong length (both operands of the calls'
// conditionals are const lvalues of one type, so no vector is copied per call).
const std::vector<MPI_Datatype> kNoTypes;

// Element types of the wrong length: a bad argument like any other, reported by the halo (at once,
// or agreed where the call agrees: init, checking mode), so that every rank throws alike.
MpiStatus type_lengths(const std::vector<void*>& arrays, const std::vector<MPI_Datatype>& types) {
  if (!types.empty() && types.size() != arrays.size()) return mpi_error(MPI_ERR_ARG, "types must be empty or have one entry per array");
  return {};
}

}  // namespace

Halo::Halo(MPI_Comm cartcomm, const std::vector<int>& interior, const std::vector<int>& ghost_lo,
           const std::vector<int>& ghost_hi, MPI_Datatype elemtype, int order, MPI_Info info) {
  const int d = static_cast<int>(interior.size());
  // Vectors of other lengths still go through the agreement, so that every rank throws.
  MpiStatus lengths;
  if (ghost_lo.size() != interior.size() || ghost_hi.size() != interior.size())
    lengths = mpi_error(MPI_ERR_ARG, "ghost_lo and ghost_hi must have one width per dimension of interior (" + std::to_string(d) +
                                         "), not " + std::to_string(ghost_lo.size()) + " and " + std::to_string(ghost_hi.size()));
  const HaloArgs args{d, interior.data(), ghost_lo.data(), ghost_hi.data(), elemtype, order, info};
  throw_on_error(HaloContext::create(cartcomm, args, &h_, lengths));
}

Halo::~Halo() = default;
Halo::Halo(Halo&&) noexcept = default;
Halo& Halo::operator=(Halo&&) noexcept = default;

void Halo::exchange(void* array) { exchange(std::vector<void*>{array}); }

void Halo::exchange(const std::vector<void*>& arrays, const std::vector<MPI_Datatype>& types) {
  if (!h_) throw MpiError(MPI_ERR_ARG, "the halo was moved from");
  const MpiStatus lengths = type_lengths(arrays, types);
  throw_on_error(h_->exchange(arrays, lengths.ok() ? types : kNoTypes, lengths));
}

HaloRequest Halo::exchange_init(void* array, MPI_Info info) { return exchange_init(std::vector<void*>{array}, {}, info); }

HaloRequest Halo::exchange_init(const std::vector<void*>& arrays, const std::vector<MPI_Datatype>& types, MPI_Info info) {
  if (!h_) throw MpiError(MPI_ERR_ARG, "the halo was moved from");
  const MpiStatus lengths = type_lengths(arrays, types);
  std::unique_ptr<Exchange> x;
  std::shared_ptr<const ir::halo::HaloPlan> plan;
  throw_on_error(h_->exchange_init(arrays, lengths.ok() ? types : kNoTypes, lengths, &x, info, &plan));
  return HaloRequest(h_, std::move(x), std::move(plan), true);
}

HaloRequest Halo::iexchange(void* array) { return iexchange(std::vector<void*>{array}); }

HaloRequest Halo::iexchange(const std::vector<void*>& arrays, const std::vector<MPI_Datatype>& types) {
  if (!h_) throw MpiError(MPI_ERR_ARG, "the halo was moved from");
  const MpiStatus lengths = type_lengths(arrays, types);
  std::unique_ptr<Exchange> x;
  std::shared_ptr<const ir::halo::HaloPlan> plan;
  throw_on_error(h_->iexchange(arrays, lengths.ok() ? types : kNoTypes, lengths, &x, &plan));
  return HaloRequest(h_, std::move(x), std::move(plan), false);
}

std::string Halo::plan() const {
  if (!h_) throw MpiError(MPI_ERR_ARG, "the halo was moved from");
  return ir::halo::to_json_string(h_->plan());
}

HaloRequest::HaloRequest(std::shared_ptr<HaloContext> halo, std::unique_ptr<Exchange> x,
                         std::shared_ptr<const ir::halo::HaloPlan> plan, bool persistent)
    : halo_(std::move(halo)), x_(std::move(x)), plan_(std::move(plan)), persistent_(persistent) {}
// A completed non-blocking exchange goes back to its halo communicator's pool (the next
// iexchange of the same arrays and types takes it); others are destroyed, an active one after
// completing. Before halo_ is released.
HaloRequest::~HaloRequest() {
  if (x_) Exchange::recycle(std::move(x_));
}
HaloRequest::HaloRequest(HaloRequest&&) noexcept = default;

// Not defaulted: that assigns halo_ first, which could free the old halo's communicator while
// the old exchange (completed as x_ is replaced) still runs on it.
HaloRequest& HaloRequest::operator=(HaloRequest&& other) noexcept {
  if (this == &other) return *this;
  if (x_) Exchange::recycle(std::move(x_));
  x_ = std::move(other.x_);
  halo_ = std::move(other.halo_);
  plan_ = std::move(other.plan_);
  persistent_ = other.persistent_;
  return *this;
}

void HaloRequest::start() {
  if (!x_) throw MpiError(MPI_ERR_REQUEST, "the request was moved from");
  // Its lane is the call's (lanes.h): a later call may hold it now.
  if (!persistent_) throw MpiError(MPI_ERR_REQUEST, "a non-blocking halo request (Halo::iexchange) runs once: it cannot be started");
  throw_on_error(x_->start());
}

void HaloRequest::wait() {
  if (!x_) throw MpiError(MPI_ERR_REQUEST, "the request was moved from");
  throw_on_error(x_->wait());
}

std::string HaloRequest::plan() const {
  if (!x_) throw MpiError(MPI_ERR_REQUEST, "the request was moved from");
  return ir::halo::to_json_string(*plan_);
}

bool HaloRequest::test() {
  if (!x_) throw MpiError(MPI_ERR_REQUEST, "the request was moved from");
  bool done = false;
  throw_on_error(x_->test(&done));
  return done;
}

}  // namespace cartplan::mpi
