// The chain of a communicator's non-blocking v calls of one op: one call at a time per rank.
#include "backends/mpi/graph_sized_chain.h"

#include <algorithm>
#include <utility>

namespace cartplan::mpi {

SizedChain::SizedChain(std::shared_ptr<GraphShared> shared, ir::graph::RankSchedule schedule)
    : calls_(std::move(shared), std::move(schedule)) {}

void SizedChain::forget() {
  std::lock_guard<std::mutex> lock(mu_);
  if (queue_.empty()) calls_.forget();
  else queue_.push_back(nullptr);
}

bool SizedChain::turn(const void* call) {
  std::lock_guard<std::mutex> lock(mu_);
  while (!queue_.empty() && queue_.front() == nullptr) {
    queue_.pop_front();
    calls_.forget();
  }
  return !queue_.empty() && queue_.front() == call;
}

void SizedChain::done(const void* call) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!queue_.empty() && queue_.front() == call) queue_.pop_front();
}

void SizedChain::drop(const void* call) {
  std::lock_guard<std::mutex> lock(mu_);
  std::replace(queue_.begin(), queue_.end(), call, static_cast<const void*>(nullptr));
}

// One queued call: waits for its turn, then runs on the chain's SizedCalls in steps.
class ChainedCall : public GraphExchange::Delegate {
 public:
  ChainedCall(std::shared_ptr<SizedChain> chain, GraphBuffers buffers, int lane)
      : chain_(std::move(chain)), buffers_(std::move(buffers)), lane_(lane) {
    std::lock_guard<std::mutex> lock(chain_->mu_);
    chain_->queue_.push_back(this);
  }
  ~ChainedCall() override {
    if (!finished_) chain_->drop(this);  // freed before it ran (its exchange was never started)
  }

  bool step(MpiStatus* result) override {
    if (!running_) {
      if (!chain_->turn(this)) return false;
      chain_->calls_.begin(buffers_, lane_);
      running_ = true;
    }
    if (!chain_->calls_.advance(false)) return false;
    *result = chain_->calls_.end();
    running_ = false;
    finished_ = true;
    chain_->done(this);
    return true;
  }

 private:
  std::shared_ptr<SizedChain> chain_;
  GraphBuffers buffers_;
  int lane_;
  bool running_ = false, finished_ = false;
};

std::unique_ptr<GraphExchange::Delegate> queue_sized_call(const std::shared_ptr<SizedChain>& chain, GraphBuffers buffers, int lane) {
  return std::make_unique<ChainedCall>(chain, std::move(buffers), lane);
}

}  // namespace cartplan::mpi
