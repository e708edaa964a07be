// The LISTEN side of a poller's or maintenance's Store (pg_store.cc): waits for announcements of
// new work and of stopped tasks, on a listen session of the store's own (listen_connection_string)
// or on its statement session (unshared: a connection that LISTENs is never shared). A listen
// session of its own that cannot connect is logged once per outage and tried again only after
// a backoff; the worker polls meanwhile.
#ifndef PGFLOW_WORKER_STORE_LISTENING_H_
#define PGFLOW_WORKER_STORE_LISTENING_H_

#include <chrono>
#include <memory>
#include <optional>
#include <stop_token>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "internal/backoff.h"
#include "pg/session.h"
#include "pg/shared_session.h"
#include "pgflow/log.h"
#include "worker/clock.h"

namespace pgflow::internal {

class StoreListening {
 public:
  // `own`: the listen session of its own, if any; `reconnected`: set by the LISTEN on connect,
  // shared with the session that LISTENs.
  StoreListening(std::shared_ptr<pg::SharedSession> statements, std::optional<pg::Session> own,
                 std::shared_ptr<bool> reconnected, const Logger& log);

  // Store::wait_for_work and Store::wait_for_stop_announcements.
  void wait_for_work(Clock::Time until, const std::stop_token& stop);
  bool wait_for_stop_announcements(Clock::Time until, const std::stop_token& stop);
  // Closes the listen session of its own (the statement session is the store's to close).
  void disconnect();

 private:
  // Runs `wait` on the session that LISTENs.
  void on_listening(const std::stop_token& stop, absl::FunctionRef<void(pg::Session&)> wait);
  bool wait_for_stop_announcements_on(pg::Session& listening, Clock::Time until,
                                      const std::stop_token& stop);
  // The session's connection. A listen connection of its own that cannot connect is said once
  // per outage (the worker polls meanwhile, and the heartbeat asks which tasks are still wanted)
  // and tried again only after a backoff (up to 30 s), failing at once until then: a host that
  // drops packets makes each try last connect_timeout (10 s by default), which would otherwise
  // stall every poll and heartbeat wait by that much.
  absl::StatusOr<pg::Connection*> connect(pg::Session& listening);

  Logger log_;
  std::shared_ptr<bool> reconnected_;
  std::shared_ptr<pg::SharedSession> statements_;
  std::optional<pg::Session> listen_session_;  // with a listen connection string of its own
  bool listen_down_ = false;                   // its outage has been logged
  Backoff listen_backoff_{std::chrono::seconds(1), std::chrono::seconds(30)};
  std::chrono::steady_clock::time_point listen_retry_at_;  // while down: the next try
};

}  // namespace pgflow::internal

#endif  // PGFLOW_WORKER_STORE_LISTENING_H_
