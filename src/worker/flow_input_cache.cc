#include "worker/flow_input_cache.h"

#include <optional>
#include <utility>

namespace pgflow::internal {

FlowInputCache::FlowInputCache(std::unique_ptr<Store> store, size_t capacity)
    : store_(std::move(store)), capacity_(capacity) {}

void FlowInputCache::put(const std::string& run_id, const nlohmann::json& input) {
  absl::MutexLock lock(&mu_);
  remember(run_id, input);
}

std::optional<nlohmann::json> FlowInputCache::cached(const std::string& run_id) {
  absl::MutexLock lock(&mu_);
  if (auto it = inputs_.find(run_id); it != inputs_.end()) return it->second;
  return std::nullopt;
}

absl::StatusOr<nlohmann::json> FlowInputCache::get(const std::string& run_id,
                                                   const std::stop_token& stop) {
  if (auto hit = cached(run_id)) return *hit;
  absl::MutexLock loading(&load_mu_);
  if (auto hit = cached(run_id)) return *hit;  // loaded by another handler meanwhile
  absl::StatusOr<nlohmann::json> input = store_->run_input(run_id, stop);
  if (!input.ok()) return input.status();
  absl::MutexLock lock(&mu_);
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
