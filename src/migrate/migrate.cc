#include "pgflow/migrate.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "absl/strings/str_cat.h"
#include "internal/status_macros.h"
#include "internal/strings.h"
#include "internal/text_checks.h"
#include "internal/timestamps.h"
#include "migrate/adopt.h"
#include "migrate/embedded_sql.h"
#include "migrate/statements.h"
#include "pg/connection.h"
#include "pg/error.h"
#include "pgflow/status.h"

namespace pgflow {
namespace {

absl::StatusOr<pg::Connection> open_connection(std::string_view connection_string,
                                               std::string_view application_name) {
  std::optional<std::string> url = pg::connection_string_or_env(connection_string);
  if (!url)
    return absl::InvalidArgumentError(
        absl::StrCat("pgflow: ", pg::no_database("connection_string")));
  return pg::Connection::open(*url, application_name);
}

Migration to_migration(const internal::EmbeddedMigration& m) {
  return Migration{m.version, std::string(m.name), std::string(m.sha256)};
}

absl::StatusOr<std::vector<AppliedMigration>> read_ledger(pg::Connection& conn) {
  PGFLOW_ASSIGN_OR_RETURN(pg::Result exists, conn.exec(internal::kLedgerExists));
  std::vector<AppliedMigration> applied;
  if (exists.scalar() != "t") return applied;
  PGFLOW_ASSIGN_OR_RETURN(pg::Result rows, conn.exec(internal::kReadLedger));
  for (int r = 0; r < rows.rows(); ++r) {
    PGFLOW_ASSIGN_OR_RETURN(std::int64_t version, rows.int64(r, 0));
    PGFLOW_ASSIGN_OR_RETURN(absl::Time applied_at, internal::parse_timestamp(rows.text(r, 3)));
    applied.push_back({Migration{static_cast<int>(version), std::string(rows.text(r, 1)),
                                 std::string(rows.text(r, 2))},
                       applied_at, rows.text(r, 4) == "t"});
  }
  return applied;
}

// Checks the ledger against the library: same checksums, nothing newer than the library.
absl::Status check_ledger(const std::vector<AppliedMigration>& applied) {
  const auto& embedded = internal::embedded_migrations();
  const int library_version = embedded.empty() ? 0 : embedded.back().version;
  for (const AppliedMigration& a : applied) {
    if (a.migration.version > library_version) {
      return absl::FailedPreconditionError(
          absl::StrCat("the database has pgflow migration ", a.migration.file_name(),
                       ", newer than this library (which knows up to version ", library_version,
                       "); upgrade the pgflow library"));
    }
    const auto& mine = embedded[static_cast<size_t>(a.migration.version - 1)];
    if (mine.sha256 == a.migration.checksum && mine.name != a.migration.name) {
      return absl::FailedPreconditionError(absl::StrCat(
          "applied migration ", a.migration.version, " is recorded as ",
          internal::printable(a.migration.name), ", not ", internal::printable(mine.name),
          " as in this library; released migrations must never be renamed"));
    }
    if (mine.sha256 != a.migration.checksum) {
      return absl::FailedPreconditionError(absl::StrCat(
          "applied migration ", a.migration.file_name(),
          " differs from this library's copy (checksum ", a.migration.checksum, " in the ledger, ",
          internal::absl_view(mine.sha256), " here); released migrations must never be edited"));
    }
  }
  return absl::OkStatus();
}

absl::Status ensure_pgmq(pg::Connection& conn) {
  PGFLOW_ASSIGN_OR_RETURN(pg::Result mode, conn.exec(internal::kPgmqMode));
  if (mode.scalar() != "missing") return absl::OkStatus();
  PGFLOW_ASSIGN_OR_RETURN(pg::Result available, conn.exec(internal::kPgmqExtensionAvailable));
  if (available.scalar() == "t") return conn.exec(internal::kCreatePgmqExtension).status();
  absl::Status s = conn.exec_script(internal::bundled_pgmq_sql());
  if (!s.ok()) return pg::with_message(s, absl::StrCat("installing bundled PGMQ: ", s.message()));
  return s;
}

absl::Status record(pg::Connection& conn, const internal::EmbeddedMigration& m, bool adopted) {
  return conn
      .exec(internal::kRecordMigration, {std::to_string(m.version), std::string(m.name),
                                         std::string(m.sha256), adopted ? "t" : "f"})
      .status();
}

// Whether the database has a pgflow schema that no ledger records (installed by upstream's
// tooling); such a schema is refused unless migrate may adopt it.
absl::StatusOr<bool> unrecorded_schema(pg::Connection& conn, const MigrateOptions& options) {
  PGFLOW_ASSIGN_OR_RETURN(bool unrecorded, internal::has_unrecorded_schema(conn));
  if (!unrecorded || options.adopt_existing_schema) return unrecorded;
  return absl::FailedPreconditionError(
      "pgflow: the database has a pgflow schema that no migration ledger records (installed by "
      "upstream pgflow's own tooling?); nothing was changed. `pgflow migrate --adopt` "
      "(MigrateOptions::adopt_existing_schema) checks that it matches 0001_core (upstream "
      "0.16.0) and adopts it, keeping its data");
}

// Why migrate would refuse the database with ledger `applied` (kFailedPrecondition): a schema no
// ledger records that it may not adopt, a ledger newer than the library or edited.
absl::Status refusal(pg::Connection& conn, const MigrateOptions& options,
                     const std::vector<AppliedMigration>& applied) {
  PGFLOW_RETURN_IF_ERROR(unrecorded_schema(conn, options).status());
  return check_ledger(applied);
}

// An unrecorded pgflow schema: adopted as 0001 when asked to, else refused before anything
// changes.
absl::Status adopt_if_unrecorded(pg::Connection& conn, const MigrateOptions& options) {
  PGFLOW_ASSIGN_OR_RETURN(bool unrecorded, unrecorded_schema(conn, options));
  if (!unrecorded) return absl::OkStatus();
  const internal::EmbeddedMigration& core = internal::embedded_migrations().front();
  return internal::adopt_existing_schema(conn, core, [&]() -> absl::Status {
    PGFLOW_RETURN_IF_ERROR(conn.exec_script(internal::kCreateLedger));
    return record(conn, core, /*adopted=*/true);
  });
}

}  // namespace

std::string Migration::file_name() const {
  char prefix[16];
  std::snprintf(prefix, sizeof prefix, "%04d_", version);
  return absl::StrCat(prefix, name, ".sql");
}

std::vector<Migration> bundled_migrations() {
  std::vector<Migration> out;
  for (const auto& m : internal::embedded_migrations()) out.push_back(to_migration(m));
  return out;
}

absl::Status migrate(std::string_view connection_string, const MigrateOptions& options) {
  PGFLOW_ASSIGN_OR_RETURN(pg::Connection conn,
                          open_connection(connection_string, "pgflow-migrate"));
  // lock_timeout 0 would mean "wait forever": never less than 1 ms.
  const std::string lock_wait = absl::StrCat(
      std::max<long long>(
          std::chrono::duration_cast<std::chrono::milliseconds>(options.lock_wait).count(), 1),
      "ms");
  // Every step is one transaction that first takes the migrators' lock, transaction-scoped, and
  // reads what it changes under it: nothing outlives a transaction, so migrate works through a
  // transaction pooler, and concurrent migrators take turns (the later finds the work done).
  auto locked = [&](absl::FunctionRef<absl::Status()> body) {
    return pg::in_transaction(conn, [&]() -> absl::Status {
      PGFLOW_RETURN_IF_ERROR(conn.exec(internal::kReadCommitted).status());
      PGFLOW_RETURN_IF_ERROR(conn.exec(internal::kSetLocalLockTimeout, {lock_wait}).status());
      absl::Status taken =
          conn.exec(internal::kTakeMigrateLock, {internal::kMigrateLockKey}).status();
      if (!taken.ok()) {
        return pg::with_message(
            taken, absl::StrCat("waiting for another pgflow migrator: ", taken.message()));
      }
      // The same bound stays for the migration's own locks (most set a shorter one, 10 s;
      // 0015 sets none): never a wait without end that holds up every claim and start queued
      // behind its lock request.
      return body();
    });
  };
  PGFLOW_RETURN_IF_ERROR(locked([&] { return ensure_pgmq(conn); }));
  const absl::Status ledger = locked([&]() -> absl::Status {
    // A ledger this library refuses (newer, edited) is refused before anything changes.
    PGFLOW_ASSIGN_OR_RETURN(std::vector<AppliedMigration> before, read_ledger(conn));
    PGFLOW_RETURN_IF_ERROR(check_ledger(before));
    absl::Status adopted = adopt_if_unrecorded(conn, options);
    return adopted.ok() ? conn.exec_script(internal::kCreateLedger) : adopted;
  });
  PGFLOW_RETURN_IF_ERROR(ledger);
  PGFLOW_ASSIGN_OR_RETURN(std::vector<AppliedMigration> applied, read_ledger(conn));
  PGFLOW_RETURN_IF_ERROR(check_ledger(applied));
  const int current = applied.empty() ? 0 : applied.back().migration.version;
  for (const auto& m : internal::embedded_migrations()) {
    if (m.version <= current) continue;
    if (options.target_version && m.version > *options.target_version) break;
    absl::Status migrated = locked([&]() -> absl::Status {
      // Another migrator may have gone ahead meanwhile (a newer library's, even).
      absl::StatusOr<std::vector<AppliedMigration>> now = read_ledger(conn);
      if (!now.ok()) return now.status();
      if (absl::Status checked = check_ledger(*now); !checked.ok()) return checked;
      if (!now->empty() && now->back().migration.version >= m.version) return absl::OkStatus();
      absl::Status s = conn.exec_script(m.sql);
      if (s.ok()) s = record(conn, m, /*adopted=*/false);
      if (s.ok()) return s;
      return pg::with_message(s, absl::StrCat("migration ", to_migration(m).file_name(),
                                              " failed and was rolled back: ", s.message()));
    });
    PGFLOW_RETURN_IF_ERROR(migrated);
  }
  return absl::OkStatus();
}

absl::Status check_migration(std::string_view connection_string, const MigrateOptions& options) {
  PGFLOW_ASSIGN_OR_RETURN(pg::Connection conn,
                          open_connection(connection_string, "pgflow-migrate"));
  PGFLOW_ASSIGN_OR_RETURN(std::vector<AppliedMigration> applied, read_ledger(conn));
  return refusal(conn, options, applied);
}

absl::StatusOr<SchemaStatus> schema_status(std::string_view connection_string) {
  PGFLOW_ASSIGN_OR_RETURN(pg::Connection conn, open_connection(connection_string, "pgflow-status"));
  SchemaStatus status;
  const auto& embedded = internal::embedded_migrations();
  status.library_version = embedded.empty() ? 0 : embedded.back().version;
  PGFLOW_ASSIGN_OR_RETURN(status.applied, read_ledger(conn));
  // What migrate would refuse (an unrecorded schema, a newer or edited ledger) is said, not
  // reported as pending or up to date.
  const absl::Status refused = refusal(conn, MigrateOptions{}, status.applied);
  if (refused.code() == absl::StatusCode::kFailedPrecondition) {
    status.problem = std::string(refused.message());
  } else if (!refused.ok()) {
    return refused;  // (a failed read, not a refusal)
  }
  const int current = status.applied.empty() ? 0 : status.applied.back().migration.version;
  for (const auto& m : embedded) {
    if (m.version > current) status.pending.push_back(to_migration(m));
  }
  PGFLOW_ASSIGN_OR_RETURN(pg::Result mode, conn.exec(internal::kPgmqMode));
  status.pgmq_mode = std::string(mode.scalar());
  PGFLOW_ASSIGN_OR_RETURN(pg::Result realtime, conn.exec(internal::kRealtime));
  status.realtime = std::string(realtime.scalar());
  return status;
}

}  // namespace pgflow
