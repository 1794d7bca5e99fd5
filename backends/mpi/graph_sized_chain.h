// Non-blocking graph v calls without a size pass per call (docs/graphs-mpi.md): the non-blocking
// calls of one op and schedule on a communicator form a chain that reuses, call after call, the
// sizes of the previous call (graph_sized_calls.h's protocol: messages as before, or a marker
// and a message with sizes). "The previous call" is the previous non-blocking call of that op in
// call order, which is the same call on every rank (collectives are called in the same order).
//
// Each rank runs the calls of a chain one after another, in call order: call k+1 posts its
// first message only once call k completed here. So when call k+1 starts, this rank's call k
// has learned the sizes of every message it received (the receiver lays out call k+1's as-before
// receives for them) and has sent every message (the sender sends as before only what call k
// sent with the same sizes): the blocking argument holds call by call, and each call has its own
// lane's tags, so messages of different calls never meet. Waiting for call k costs nothing on
// the wire: call k+1 is queued, returns at once, and starts inside whichever progress (the
// progress hook, test or wait of any request) completes call k. Calls of one chain share the
// chain's temp slots and layouts, which is safe because they never run together on a rank.
//
// A call that does not run through the chain on this rank (an argument error, reuse off, a
// request freed before it ran) makes the chain forget at that point in call order: the next
// call sends everything with sizes, which every receiver accepts.
//
//   auto chain = std::make_shared<SizedChain>(shared, schedule);   // per communicator, op, schedule
//   std::unique_ptr<GraphExchange::Delegate> d = queue_sized_call(chain, buffers, lane);
//   GraphExchange::create_delegated(shared, algorithm, lane, true, std::move(d), &x);
#pragma once

#include <deque>
#include <memory>
#include <mutex>

#include "backends/mpi/graph_comm.h"
#include "backends/mpi/graph_exchange.h"
#include "backends/mpi/graph_sized_calls.h"
#include "ir/graph/plan.h"

namespace cartplan::mpi {

class SizedChain {
 public:
  SizedChain(std::shared_ptr<GraphShared> shared, ir::graph::RankSchedule schedule);
  // After the calls queued so far, forget the previous call's sizes (a call of the op that did
  // not run through the chain on this rank).
  void forget();

 private:
  friend class ChainedCall;
  // Whether `call` runs now: the first in the queue once the forgets ahead of it are done.
  bool turn(const void* call);
  void done(const void* call);  // `call` finished; the next may start
  void drop(const void* call);  // `call` will never run here: forget in its place
  std::mutex mu_;
  std::deque<const void*> queue_;  // in call order; nullptr: forget there
  SizedCalls calls_;
};

// Queues one non-blocking call with `buffers` (which the delegate keeps) on `lane`, after the
// chain's earlier calls; the delegate runs it as a GraphExchange's communication.
std::unique_ptr<GraphExchange::Delegate> queue_sized_call(const std::shared_ptr<SizedChain>& chain, GraphBuffers buffers, int lane);

}  // namespace cartplan::mpi
