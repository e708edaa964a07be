// Run inputs for handlers that ask for them (Context::flow_input), loaded lazily on a
// dedicated connection and cached per run.
#ifndef PGFLOW_WORKER_FLOW_INPUT_CACHE_H_
#define PGFLOW_WORKER_FLOW_INPUT_CACHE_H_

#include <deque>
#include <mutex>
#include <stop_token>
#include <string>
#include <unordered_map>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "pg/session.h"

namespace pgflow::internal {

class FlowInputCache {
 public:
  // Keeps the inputs of the last `capacity` runs.
  FlowInputCache(pg::Session session, size_t capacity);

  // Remembers an input the claim already returned (root steps).
  void put(const std::string& run_id, const nlohmann::json& input);
  // The run's input: cached, or read from pgflow.runs (retrying transient failures until
  // `stop`). Loads are serialised on the one connection.
  absl::StatusOr<nlohmann::json> get(const std::string& run_id, const std::stop_token& stop);
  // Closes the connection (no handler runs any more).
  void close();

 private:
  void remember(const std::string& run_id, const nlohmann::json& input);  // mu_ held

  std::mutex mu_;       // the cache; never held during a database call
  std::mutex load_mu_;  // the one connection, used by one load at a time
  pg::Session session_;
  size_t capacity_;
  std::unordered_map<std::string, nlohmann::json> inputs_;
  std::deque<std::string> order_;  // oldest first, for eviction
};

}  // namespace pgflow::internal

#endif  // PGFLOW_WORKER_FLOW_INPUT_CACHE_H_
