// Cart_Request_s: what a Cart_Request handle of the C API points to, shared by the collectives
// (c_api.cc), the graph collectives and the halo API (halo_api.cc), so that Cart_start,
// Cart_wait, Cart_test, the *all forms and Cart_request_free drive all of them. A request runs
// a Cartesian or halo exchange (the Exchange machinery) or a graph exchange (Cart_graph_*); the
// request functions dispatch to whichever it holds.
//
//   Cart_Request r = new Cart_Request_s{nullptr, std::move(exchange), true, nullptr, nullptr};
#pragma once

#include <memory>

#include "backends/mpi/exchange.h"
#include "backends/mpi/graph_exchange.h"
#include "ir/halo/plan.h"

struct Cart_Request_s {
  // What the exchange's communicator belongs to, kept alive while the request is (a halo's
  // private communicator: a request may outlive Cart_halo_free). Declared first, so that it is
  // released after the exchange.
  std::shared_ptr<const void> owner;
  std::unique_ptr<cartplan::mpi::Exchange> exchange;
  bool persistent = false;
  std::unique_ptr<cartplan::mpi::GraphExchange> graph;
  // A persistent halo exchange's plan (the one measuring mode chose, or the halo's): what
  // Cart_halo_request_plan returns. Null for every other request.
  std::shared_ptr<const cartplan::ir::halo::HaloPlan> halo_plan;

  cartplan::mpi::MpiStatus start() { return graph ? graph->start() : exchange->start(); }
  cartplan::mpi::MpiStatus wait() { return graph ? graph->wait() : exchange->wait(); }
  cartplan::mpi::MpiStatus test(bool* done) { return graph ? graph->test(done) : exchange->test(done); }
  bool active() const { return graph ? graph->active() : exchange->active(); }
  bool pending() const { return graph ? graph->pending() : exchange->pending(); }
  MPI_Comm error_comm() const { return graph ? graph->error_comm() : exchange ? exchange->error_comm() : MPI_COMM_SELF; }
};
