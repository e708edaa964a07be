// The Store on PostgreSQL: every statement the worker sends, named, in pg_store.cc, on a
// statement session (a connection re-established on demand; its own, or shared with other roles
// of the worker under a connection budget: store_connections.h) and, for the roles that wait
// for announcements, a LISTEN on it or on a listen session of their own.
#ifndef PGFLOW_WORKER_PG_STORE_H_
#define PGFLOW_WORKER_PG_STORE_H_

#include <memory>
#include <optional>

#include "pg/session.h"
#include "pg/shared_session.h"
#include "pgflow/log.h"
#include "worker/store.h"

namespace pgflow::internal {

// A Store on `statements` (its own connection, or one shared with other roles); `listen`, when
// set, carries the LISTEN of a poller or maintenance store (else it LISTENs on `statements`,
// unshared, or not at all); `reconnected` is set when a LISTEN was (re-)established
// (store_connections.cc opens them).
std::unique_ptr<Store> pg_store(std::shared_ptr<pg::SharedSession> statements,
                                std::optional<pg::Session> listen,
                                std::shared_ptr<bool> reconnected, const Logger& log);

}  // namespace pgflow::internal

#endif  // PGFLOW_WORKER_PG_STORE_H_
