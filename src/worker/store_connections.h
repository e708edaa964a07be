// A worker's connections to PostgreSQL: which of its roles (poller, reporter, heartbeat, run
// inputs) uses which statement connection under a connection budget, where the LISTENs go, and
// the factory that opens each role's Store (a PgStore) accordingly.
#ifndef PGFLOW_WORKER_STORE_CONNECTIONS_H_
#define PGFLOW_WORKER_STORE_CONNECTIONS_H_

#include <string>

#include "worker/store.h"

namespace pgflow::internal {

// The statement connections a worker holds when each role has its own (poller, reporter,
// heartbeat, run inputs).
inline constexpr int kRoleConnections = 4;

// Where a worker's stores connect (WorkerConfig's connection settings).
struct StoreConnections {
  std::string conninfo = {};         // every statement (may be a transaction pooler)
  std::string listen_conninfo = {};  // the LISTENs; empty: conninfo
  bool poll_only = false;            // no LISTEN at all
  // Statement connections at most (besides startup's, closed before the others open): below
  // kRoleConnections roles share them, taking turns. Only without a LISTEN on conninfo.
  int max_connections = kRoleConnections;

  // Whether the poller and the heartbeat LISTEN on their statement connections, which then
  // cannot be shared (a connection waiting for notifications runs nothing else).
  bool statement_connections_listen() const {
    return !poll_only && (listen_conninfo.empty() || listen_conninfo == conninfo);
  }
};

// Opens the stores of one worker on PostgreSQL. Unless poll-only, the poller LISTENs for new
// work on its queue and the maintenance store for stopped tasks, each on its statement
// connection, or on a connection of its own to listen_conninfo.
StoreFactory pg_stores(StoreConnections connections);

}  // namespace pgflow::internal

#endif  // PGFLOW_WORKER_STORE_CONNECTIONS_H_
