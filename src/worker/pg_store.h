// The Store on PostgreSQL: one pg::Session (a connection re-established on demand) and every
// statement the worker sends, named, in pg_store.cc.
#ifndef PGFLOW_WORKER_PG_STORE_H_
#define PGFLOW_WORKER_PG_STORE_H_

#include <memory>
#include <string>

#include "pgflow/log.h"
#include "worker/store.h"

namespace pgflow::internal {

// The Store of `role` on the database at `conninfo`, for a worker of `queue`. The poller's
// connection LISTENs for new work on the queue, the maintenance connection for stopped tasks.
std::unique_ptr<Store> open_pg_store(const std::string& conninfo, StoreRole role,
                                     const std::string& queue, const Logger& log);

}  // namespace pgflow::internal

#endif  // PGFLOW_WORKER_PG_STORE_H_
