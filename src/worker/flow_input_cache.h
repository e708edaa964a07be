// Run inputs for handlers that ask for them (Context::flow_input), loaded lazily through the
// worker's inputs Store (its own connection) and cached per run.
// Thread-safe (handlers call get() concurrently): mu_ guards the cache and is never held
// during a database call; load_mu_ guards the connection and is taken before mu_. One load at
// a time: the others wait for it, each until its own stop token fires.
#ifndef PGFLOW_WORKER_FLOW_INPUT_CACHE_H_
#define PGFLOW_WORKER_FLOW_INPUT_CACHE_H_

#include <deque>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <unordered_map>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "nlohmann/json.hpp"
#include "worker/store.h"

namespace pgflow::internal {

class FlowInputCache {
 public:
  // Keeps the inputs of the last `capacity` runs.
  FlowInputCache(std::unique_ptr<Store> store, size_t capacity);

  // Remembers an input the claim already returned (root steps).
  void put(const std::string& run_id, const nlohmann::json& input) ABSL_LOCKS_EXCLUDED(mu_);
  // The run's input: cached, or loaded (retrying transient failures until `stop`, the task's
  // token). Loads are serialised on the one connection; waiting for another's ends at `stop` too
  // (kCancelled).
  absl::StatusOr<nlohmann::json> get(const std::string& run_id, const std::stop_token& stop)
      ABSL_LOCKS_EXCLUDED(load_mu_, mu_);
  // Closes the connection (no handler runs any more).
  void close() ABSL_LOCKS_EXCLUDED(load_mu_);

 private:
  void remember(const std::string& run_id, const nlohmann::json& input)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex load_mu_ ABSL_ACQUIRED_BEFORE(mu_);  // store_: one load at a time on it
  absl::Mutex mu_;  // inputs_ and order_; never held during a database call
  std::unique_ptr<Store> store_ ABSL_GUARDED_BY(load_mu_);
  const size_t capacity_;
  std::unordered_map<std::string, nlohmann::json> inputs_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> order_ ABSL_GUARDED_BY(mu_);  // oldest first, for eviction
  bool loading_ ABSL_GUARDED_BY(mu_) = false;           // a get() holds the connection
  absl::CondVar loaded_;                                // signalled when it lets go, or a stop
};

}  // namespace pgflow::internal

#endif  // PGFLOW_WORKER_FLOW_INPUT_CACHE_H_
