// Adopting a pgflow schema that other tooling installed (upstream's migrations: the pgflow
// schema at upstream 0.16.0, the semantics of our 0001, but no migration ledger).
#ifndef PGFLOW_MIGRATE_ADOPT_H_
#define PGFLOW_MIGRATE_ADOPT_H_

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "migrate/embedded_sql.h"
#include "pg/connection.h"

namespace pgflow::internal {

// True when the database has a pgflow schema with flows but no migration recorded.
absl::StatusOr<bool> has_unrecorded_schema(pg::Connection& conn);

// In one transaction: builds 0001 next to the existing schema and compares tables, columns,
// constraints, indexes, types and function signatures. Any difference (an older or newer
// upstream release, local changes) is kFailedPrecondition listing every one, with nothing
// changed. Otherwise the existing schema keeps its data and its extra functions (upstream-only
// helpers), gets 0001's function bodies and privileges, and the ledger records 0001 as adopted.
// `record` runs last in the same transaction (the ledger entry). Runs in the caller's
// transaction.
absl::Status adopt_existing_schema(pg::Connection& conn, const EmbeddedMigration& core,
                                   absl::FunctionRef<absl::Status()> record);

}  // namespace pgflow::internal

#endif  // PGFLOW_MIGRATE_ADOPT_H_
