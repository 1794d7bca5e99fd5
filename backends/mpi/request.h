// Cart_Request_s: what a Cart_Request handle of the C API points to, shared by the collectives
// (c_api.cc) and the halo API (halo_api.cc), so that Cart_start, Cart_wait, Cart_test, the
// *all forms and Cart_request_free drive both through the one Exchange machinery.
//
//   Cart_Request r = new Cart_Request_s{nullptr, std::move(exchange), true};
#pragma once

#include <memory>

#include "backends/mpi/exchange.h"

struct Cart_Request_s {
  // What the exchange's communicator belongs to, kept alive while the request is (a halo's
  // private communicator: a request may outlive Cart_halo_free). Declared first, so that it is
  // released after the exchange.
  std::shared_ptr<const void> owner;
  std::unique_ptr<cartplan::mpi::Exchange> exchange;
  bool persistent = false;
};
