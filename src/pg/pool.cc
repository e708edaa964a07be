#include "pg/pool.h"

#include <utility>

#include "absl/time/time.h"

namespace pgflow::pg {

Pool::Pool(std::string conninfo, std::string application_name, int max_size,
           std::chrono::milliseconds acquire_timeout)
    : conninfo_(std::move(conninfo)),
      application_name_(std::move(application_name)),
      max_size_(max_size),
      acquire_timeout_(acquire_timeout) {}

absl::StatusOr<Pool::Lease> Pool::acquire() {
  absl::ReleasableMutexLock lock(&mu_);
  if (!mu_.AwaitWithTimeout(absl::Condition(this, &Pool::can_lease),
                            absl::FromChrono(acquire_timeout_))) {
    return absl::ResourceExhaustedError("all " + std::to_string(max_size_) +
                                        " pooled connections stayed busy");
  }
  if (!idle_.empty()) {
    Connection conn = std::move(idle_.back());
    idle_.pop_back();
    return Lease(this, std::move(conn));
  }
  ++open_;  // reserve the slot, connect without holding the lock
  lock.Release();
  absl::StatusOr<Connection> conn = Connection::open(conninfo_, application_name_);
  if (!conn.ok()) {
    absl::MutexLock relock(&mu_);  // unlocking wakes a waiter for the freed slot
    --open_;
    return conn.status();
  }
  return Lease(this, std::move(*conn));
}

void Pool::give_back(Connection conn) {
  absl::MutexLock lock(&mu_);  // unlocking wakes a waiter that can now lease
  if (conn.idle()) {
    idle_.push_back(std::move(conn));
    return;
  }
  --open_;
  if (!conn.healthy()) {
    // The connection died: so, most likely, did the idle ones opened before it (a server
    // restart ends them all, and libpq notices only at their next use). Close them, so the
    // next lease is a fresh connection rather than another dead one.
    open_ -= static_cast<int>(idle_.size());
    idle_.clear();
  }
}

}  // namespace pgflow::pg
