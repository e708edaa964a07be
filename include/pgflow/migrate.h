// File: pgflow/migrate.h
//
// Installs and upgrades pgflow's SQL core. The migrations are embedded in the library (and
// also installed to share/pgflow/sql/migrations), so no files are needed at run time.
//
// migrate() first makes sure the PGMQ queue API exists: it uses the `pgmq` extension when
// the server offers it and otherwise installs pgflow's bundled pure-SQL PGMQ 1.5.1 layer.
// Then it applies every pending migration in order, each in its own transaction, and records
// version, name and checksum in the ledger table pgflow.schema_migrations. Concurrent
// callers take turns: each transaction first takes a transaction-scoped advisory lock and
// re-reads the ledger (so migrate keeps nothing in its session and works through a
// transaction pooler); re-running is a no-op.
//
// Example:
//
//   if (absl::Status s = pgflow::migrate(); !s.ok()) { ... }   // DATABASE_URL; or migrate(url)
#ifndef PGFLOW_MIGRATE_H_
#define PGFLOW_MIGRATE_H_

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace pgflow {

// A migration this library carries.
struct Migration {
  int version = 0;                // 1, 2, ... (the NNNN of NNNN_name.sql)
  std::string name;               // "core"
  std::string checksum;           // SHA-256 of the file, hex
  std::string file_name() const;  // "0001_core.sql"
};

// A migration recorded in a database's ledger.
struct AppliedMigration {
  Migration migration;
  absl::Time applied_at;
  // 0001 only: not applied, but an existing schema (installed by upstream's tooling) was
  // verified equal to it and adopted (MigrateOptions::adopt_existing_schema).
  bool adopted = false;
};

// What a database holds, compared with this library.
struct SchemaStatus {
  int library_version = 0;                // newest migration this library carries
  std::vector<AppliedMigration> applied;  // ascending
  std::vector<Migration> pending;         // ascending; empty when up to date
  // "extension <version>", "bundled" (pgflow's pure-SQL layer), "external" (a SQL-only
  // install of upstream PGMQ) or "missing".
  std::string pgmq_mode;
  // Supabase broadcasts (docs/security.md, "Realtime"): "on" (realtime.send exists and its
  // owner has the privileges of pgflow's owner), "off" (no realtime.send, or no pgflow schema)
  // or "untrusted (owned by <roles>)": a realtime.send exists but pgflow never calls it.
  std::string realtime;
  // Why migrate would refuse this database, when it would: a pgflow schema no ledger records
  // (adopt it: MigrateOptions::adopt_existing_schema), a ledger newer than this library, an
  // applied migration that differs from this library's copy. Then `pending` means nothing.
  std::optional<std::string> problem;
};

struct MigrateOptions {
  // Stop after this version (used to test upgrades). Default: apply everything.
  std::optional<int> target_version;
  // How long each of migrate's transactions waits for another migrator's (the advisory lock)
  // before failing with kAborted, and for a table lock a migration takes without a bound of
  // its own (a migration that sets lock_timeout keeps its own, usually 10 s). Default: 60 s.
  std::chrono::seconds lock_wait{60};
  // A database whose pgflow schema no ledger records (installed by upstream pgflow's own
  // tooling, at upstream 0.16.0) is refused unless this is set. Then, in one transaction, the
  // schema's tables, columns, constraints, indexes, types and function signatures are compared
  // with 0001's: any difference is kFailedPrecondition listing them all, nothing changed;
  // otherwise the schema keeps its data (and functions of other names only upstream has), gets
  // 0001's function bodies and privileges (EXECUTE on its SECURITY DEFINER functions is revoked
  // from every role: re-run sql/contrib/grants.sql), 0001 is recorded as adopted, and 0002+
  // follow as usual. Stop upstream's workers first (docs/upgrading.md). Default: false.
  bool adopt_existing_schema = false;
};

// The migrations embedded in this library, ascending.
std::vector<Migration> bundled_migrations();

// Applies pending migrations. Fails, changing nothing further, when an applied migration's
// checksum differs from the library's copy (the error names the file) or when the database
// has migrations newer than this library.
// `connection_string`: a libpq connection string or URL; empty: the DATABASE_URL environment
// variable (kInvalidArgument when neither is set).
absl::Status migrate(std::string_view connection_string = {}, const MigrateOptions& options = {});

// What migrate(connection_string, options) would refuse before applying anything, checked
// without changing anything: an applied migration edited since, a database newer than this
// library, a schema no ledger records (unless options.adopt_existing_schema). `pgflow migrate
// --dry-run` asks it first, so a dry run never promises what the run refuses.
absl::Status check_migration(std::string_view connection_string = {},
                             const MigrateOptions& options = {});

// Reads the ledger and PGMQ mode without changing anything.
absl::StatusOr<SchemaStatus> schema_status(std::string_view connection_string = {});

}  // namespace pgflow

#endif  // PGFLOW_MIGRATE_H_
