#include "worker/flow_input_cache.h"

#include <optional>
#include <utility>

namespace pgflow::internal {

FlowInputCache::FlowInputCache(pg::Session session, size_t capacity)
    : session_(std::move(session)), capacity_(capacity) {}

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
  absl::StatusOr<std::string> text = session_.retry<std::string>(
      stop, "load run input", [&](pg::Connection& c) -> absl::StatusOr<std::string> {
        absl::StatusOr<pg::Result> r =
            c.exec("select input::text from pgflow.runs where run_id = $1::uuid", {run_id});
        if (!r.ok()) return r.status();
        if (r->rows() == 0) return absl::NotFoundError("run " + run_id + " does not exist");
        return std::string(r->scalar());
      });
  if (!text.ok()) return text.status();
  nlohmann::json input = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (input.is_discarded()) return absl::InternalError("run " + run_id + " has unparsable input");
  absl::MutexLock lock(&mu_);
  remember(run_id, input);
  return input;
}

void FlowInputCache::close() {
  absl::MutexLock loading(&load_mu_);
  session_.reset();
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
