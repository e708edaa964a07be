#include "pg/pool.h"

#include <utility>

namespace pgflow::pg {

Pool::Pool(std::string conninfo, std::string application_name, int max_size,
           std::chrono::milliseconds acquire_timeout)
    : conninfo_(std::move(conninfo)),
      application_name_(std::move(application_name)),
      max_size_(max_size),
      acquire_timeout_(acquire_timeout) {}

absl::StatusOr<Pool::Lease> Pool::acquire() {
  std::unique_lock<std::mutex> lock(mu_);
  const bool got = available_.wait_for(lock, acquire_timeout_, [this] {
    return !idle_.empty() || open_ < max_size_;
  });
  if (!got) {
    return absl::ResourceExhaustedError("all " + std::to_string(max_size_) +
                                        " pooled connections stayed busy");
  }
  if (!idle_.empty()) {
    Connection conn = std::move(idle_.back());
    idle_.pop_back();
    return Lease(this, std::move(conn));
  }
  ++open_;  // reserve the slot, connect without holding the lock
  lock.unlock();
  absl::StatusOr<Connection> conn = Connection::open(conninfo_, application_name_);
  if (!conn.ok()) {
    std::lock_guard<std::mutex> relock(mu_);
    --open_;
    available_.notify_one();
    return conn.status();
  }
  return Lease(this, std::move(*conn));
}

void Pool::give_back(Connection conn) {
  std::lock_guard<std::mutex> lock(mu_);
  if (conn.idle()) {
    idle_.push_back(std::move(conn));
  } else {
    --open_;
  }
  available_.notify_one();
}

}  // namespace pgflow::pg
