// A Session that threads take turns on: the roles of a worker share connections this way when
// WorkerConfig::max_connections is below one per role. One caller at a time, first come first
// served (a busy role cannot starve a quiet one); a caller waiting for its turn gives up when
// its stop token is requested.
#ifndef PGFLOW_PG_SHARED_SESSION_H_
#define PGFLOW_PG_SHARED_SESSION_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <stop_token>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "internal/backoff.h"
#include "pg/session.h"
#include "pgflow/log.h"

namespace pgflow::pg {

class SharedSession {
 public:
  explicit SharedSession(Session session) : session_(std::move(session)) {}

  // One more user (a worker role's store) holds it; each one disconnects when it is done.
  void add_user() {
    std::lock_guard lock(mu_);
    ++users_;
  }

  // Runs `op(session)` in the caller's turn, and returns what it returns (absl::Status or
  // absl::StatusOr<T>); kCancelled when `stop` is requested before the turn comes.
  template <typename Op>
  auto run(const std::stop_token& stop, Op&& op) -> decltype(op(std::declval<Session&>())) {
    {
      std::unique_lock lock(mu_);
      const std::uint64_t ticket = next_ticket_++;
      if (!turn_.wait(lock, stop, [&] { return serving_ == ticket; })) {
        abandoned_.insert(ticket);  // skipped when its turn comes
        return absl::CancelledError("stopped while waiting for a shared connection");
      }
    }
    struct EndTurn {
      SharedSession* self;
      ~EndTurn() { self->end_turn(); }
    } end_turn{this};
    return op(session_);
  }

  // Session::retry in turns: a turn for each try and none while pausing between tries, so a
  // caller riding out an outage or a conflict does not keep the others off the connection
  // meanwhile. `backoff` is the caller's own.
  template <typename T>
  absl::StatusOr<T> retry(const std::stop_token& stop, std::string_view what,
                          internal::Backoff& backoff, const Logger& log,
                          const std::function<absl::StatusOr<T>(Connection&)>& op) {
    return retry_transient<T>(stop, what, backoff, log, [&] {
      return run(stop, [&](Session& s) { return s.attempt<T>(op); });
    });
  }

  // How many callers wait for their turn now (for tests and diagnostics).
  int waiting() {
    std::lock_guard lock(mu_);
    return static_cast<int>(next_ticket_ - serving_) - 1 - static_cast<int>(abandoned_.size());
  }

  // A user is done with it: the last one's call closes the connection (the next call would
  // reconnect).
  void disconnect() {
    {
      std::lock_guard lock(mu_);
      if (users_ > 1) {
        --users_;
        return;
      }
      users_ = 0;
    }
    (void)run(std::stop_token(), [](Session& s) {
      s.reset();
      return absl::OkStatus();
    });
  }

 private:
  void end_turn() {
    {
      std::lock_guard lock(mu_);
      ++serving_;
      while (abandoned_.erase(serving_) > 0) ++serving_;
    }
    turn_.notify_all();
  }

  std::mutex mu_;
  std::condition_variable_any turn_;
  // Tickets, in the order callers arrived: `serving_` holds the turn; abandoned ones are skipped.
  std::uint64_t next_ticket_ = 0;      // guarded by mu_
  std::uint64_t serving_ = 0;          // guarded by mu_
  std::set<std::uint64_t> abandoned_;  // guarded by mu_
  int users_ = 0;                      // guarded by mu_
  Session session_;                    // used by the caller whose turn it is
};

}  // namespace pgflow::pg

#endif  // PGFLOW_PG_SHARED_SESSION_H_
