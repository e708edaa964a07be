// The SQL embedded at build time by cmake/embed_sql.cmake.
#ifndef PGFLOW_MIGRATE_EMBEDDED_SQL_H_
#define PGFLOW_MIGRATE_EMBEDDED_SQL_H_

#include <string_view>
#include <vector>

namespace pgflow::internal {

struct EmbeddedMigration {
  int version;
  std::string_view name;
  std::string_view sha256;
  std::string_view sql;
};

// sql/migrations/*.sql, ascending by version.
const std::vector<EmbeddedMigration>& embedded_migrations();

// A migration's read-only pre-upgrade report (sql/audit/NNNN_name_audit.sql): one SELECT of
// (severity, category, flow_slug, step_slug, detail, repair_hint) rows.
struct EmbeddedAudit {
  int version;  // the migration it audits
  std::string_view file_name;
  std::string_view sql;
};

// sql/audit/*.sql, ascending by version.
const std::vector<EmbeddedAudit>& embedded_audits();

// sql/pgmq/pgmq.sql: the pure-SQL PGMQ 1.5.1 layer.
std::string_view bundled_pgmq_sql();

}  // namespace pgflow::internal

#endif  // PGFLOW_MIGRATE_EMBEDDED_SQL_H_
