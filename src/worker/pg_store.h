// The Store on PostgreSQL: every statement the worker sends, named, in pg_store.cc, on a
// statement session (a connection re-established on demand; its own, or shared with other roles
// of the worker under a connection budget) and, for the roles that wait for announcements, a
// LISTEN on it or on a listen session of their own.
#ifndef PGFLOW_WORKER_PG_STORE_H_
#define PGFLOW_WORKER_PG_STORE_H_

#include <string>

#include "pgflow/log.h"
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

#endif  // PGFLOW_WORKER_PG_STORE_H_
