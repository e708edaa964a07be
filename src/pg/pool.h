// A bounded pool of connections shared by threads: each lease is one thread's connection
// until it is returned. Connections that come back broken or inside a transaction are closed
// instead of reused. Thread-safe: mu_ guards the idle list and the count of open connections;
// it is never held while connecting.
#ifndef PGFLOW_PG_POOL_H_
#define PGFLOW_PG_POOL_H_

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "pg/connection.h"

namespace pgflow::pg {

class Pool {
 public:
  class Lease {
   public:
    Lease(Lease&& other) noexcept : pool_(other.pool_), conn_(std::move(other.conn_)) {
      other.pool_ = nullptr;
    }
    Lease& operator=(Lease&& other) noexcept {
      if (this != &other) {
        if (pool_) pool_->give_back(std::move(conn_));
        pool_ = std::exchange(other.pool_, nullptr);
        conn_ = std::move(other.conn_);
      }
      return *this;
    }
    ~Lease() {
      if (pool_) pool_->give_back(std::move(conn_));
    }
    Connection& operator*() { return conn_; }
    Connection* operator->() { return &conn_; }

   private:
    friend class Pool;
    Lease(Pool* pool, Connection conn) : pool_(pool), conn_(std::move(conn)) {}
    Pool* pool_;
    Connection conn_;
  };

  Pool(std::string conninfo, std::string application_name, int max_size,
       std::chrono::milliseconds acquire_timeout);

  // An idle connection, a new one while below max_size, or the next one returned; fails with
  // kResourceExhausted after acquire_timeout. A dead connection given back closes the idle
  // ones too (after a server restart they are dead as well).
  absl::StatusOr<Lease> acquire() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void give_back(Connection conn) ABSL_LOCKS_EXCLUDED(mu_);
  // An idle connection to lease, or room to open one.
  bool can_lease() const ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return !idle_.empty() || open_ < max_size_;
  }

  const std::string conninfo_;
  const std::string application_name_;
  const int max_size_;
  const std::chrono::milliseconds acquire_timeout_;
  absl::Mutex mu_;  // idle_ and open_; waiters wake when a lease becomes possible
  std::vector<Connection> idle_ ABSL_GUARDED_BY(mu_);
  int open_ ABSL_GUARDED_BY(mu_) = 0;  // idle + leased
};

}  // namespace pgflow::pg

#endif  // PGFLOW_PG_POOL_H_
