#include "worker/flow_input_cache.h"

#include <stop_token>
#include <utility>

namespace pgflow::internal {

FlowInputCache::FlowInputCache(std::unique_ptr<Store> store, size_t capacity)
    : store_(std::move(store)), capacity_(capacity) {}

void FlowInputCache::put(const std::string& run_id, const nlohmann::json& input) {
  absl::MutexLock lock(&mu_);
  remember(run_id, input);
}

absl::StatusOr<nlohmann::json> FlowInputCache::get(const std::string& run_id,
                                                   const std::stop_token& stop) {
  // (Made before taking mu_: a token already stopped runs the callback at once.)
  std::stop_callback wake(stop, [this] {
    absl::MutexLock lock(&mu_);
    loaded_.SignalAll();
  });
  {
    absl::MutexLock lock(&mu_);
    for (;;) {
      if (auto it = inputs_.find(run_id); it != inputs_.end()) return it->second;
      if (!loading_) break;
      // Another handler's load holds the connection; it may be riding out an outage.
      if (stop.stop_requested())
        return absl::CancelledError("stopped while waiting to load the run input");
      loaded_.Wait(&mu_);
    }
    loading_ = true;
  }
  absl::StatusOr<nlohmann::json> input;
  {
    absl::MutexLock loading(&load_mu_);
    input = store_->run_input(run_id, stop);
  }
  absl::MutexLock lock(&mu_);
  loading_ = false;
  loaded_.SignalAll();
  if (!input.ok()) return input.status();
  remember(run_id, *input);
  return input;
}

void FlowInputCache::close() {
  absl::MutexLock loading(&load_mu_);
  store_->disconnect();
}

void FlowInputCache::remember(const std::string& run_id, const nlohmann::json& input) {
  if (inputs_.emplace(run_id, input).second) {
    order_.push_back(run_id);
    while (order_.size() > capacity_) {
      inputs_.erase(order_.front());
      order_.pop_front();
    }
  }
}

}  // namespace pgflow::internal
