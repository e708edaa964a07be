#include "worker/store_connections.h"

#include <array>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "internal/status_macros.h"
#include "pg/connection.h"
#include "pg/session.h"
#include "pg/shared_session.h"
#include "worker/pg_store.h"

namespace pgflow::internal {
namespace {

std::string_view application_name(StoreRole role) {
  switch (role) {
    case StoreRole::kStartup:
      return "pgflow-worker-startup";
    case StoreRole::kPoller:
      return "pgflow-worker-poller";
    case StoreRole::kReporter:
      return "pgflow-worker-reporter";
    case StoreRole::kMaintenance:
      return "pgflow-worker-heartbeat";
    case StoreRole::kInputs:
      return "pgflow-worker-inputs";
  }
  return "pgflow-worker";
}

// What a new connection of `role` does first: LISTEN where the role waits for announcements,
// noting in `reconnected` that announcements sent before may have been missed.
std::function<absl::Status(pg::Connection&)> listen_on_connect(
    StoreRole role, const std::string& queue, const std::shared_ptr<bool>& reconnected) {
  std::string channel;
  if (role == StoreRole::kPoller) channel = "pgflow_queue:" + queue;
  if (role == StoreRole::kMaintenance) channel = "pgflow_stop:" + queue;
  if (channel.empty()) return {};
  return [channel, flag = reconnected](pg::Connection& c) {
    PGFLOW_RETURN_IF_ERROR(c.listen(channel));
    *flag = true;
    return absl::OkStatus();
  };
}

// Which of a worker's statement connections a role uses, within `budget` of them: each its own
// at kRoleConnections; below, the least busy share: run inputs the heartbeat's (3); the
// heartbeat the poller's and run inputs the reporter's (2); one for all (1). -1: the startup
// store, whose connection closes before the others open.
int connection_number(StoreRole role, int budget) {
  int own = 0;
  switch (role) {
    case StoreRole::kStartup:
      return -1;
    case StoreRole::kPoller:
      own = 0;
      break;
    case StoreRole::kReporter:
      own = 1;
      break;
    case StoreRole::kMaintenance:
      own = 2;
      break;
    case StoreRole::kInputs:
      own = 3;
      break;
  }
  if (budget >= kRoleConnections) return own;
  if (budget == 3) return own == 3 ? 2 : own;
  if (budget == 2) return own % 2;
  return 0;
}

}  // namespace

StoreFactory pg_stores(StoreConnections connections) {
  struct Shared {
    std::mutex mu;
    std::array<std::shared_ptr<pg::SharedSession>, 4> sessions;  // by connection number
  };
  auto shared = std::make_shared<Shared>();
  return [connections = std::move(connections), shared](
             StoreRole role, const std::string& queue,
             const Logger& log) -> std::unique_ptr<Store> {
    const std::string name(application_name(role));
    auto reconnected = std::make_shared<bool>(false);
    std::function<absl::Status(pg::Connection&)> listen =
        connections.poll_only ? nullptr : listen_on_connect(role, queue, reconnected);
    std::optional<pg::Session> listen_session;
    if (listen && !connections.statement_connections_listen()) {
      listen_session.emplace(connections.listen_conninfo, name + "-listen", log,
                             std::exchange(listen, nullptr));
    }
    std::shared_ptr<pg::SharedSession> statements;
    const int number = connection_number(role, connections.max_connections);
    if (listen || number < 0) {
      // LISTENs on its statement connection, or the startup store: a connection of its own.
      statements = std::make_shared<pg::SharedSession>(
          pg::Session(connections.conninfo, name, log, std::move(listen)));
    } else {
      std::lock_guard lock(shared->mu);
      std::shared_ptr<pg::SharedSession>& slot = shared->sessions[static_cast<size_t>(number)];
      if (!slot) {
        const bool is_shared = connections.max_connections < kRoleConnections;
        slot = std::make_shared<pg::SharedSession>(
            pg::Session(connections.conninfo,
                        is_shared ? absl::StrCat("pgflow-worker-shared-", number) : name, log));
      }
      statements = slot;
    }
    statements->add_user();
    return pg_store(std::move(statements), std::move(listen_session), std::move(reconnected), log);
  };
}

}  // namespace pgflow::internal
