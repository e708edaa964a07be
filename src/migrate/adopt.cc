#include "migrate/adopt.h"

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "internal/status_macros.h"
#include "internal/strings.h"
#include "migrate/statements.h"
#include "nlohmann/json.hpp"

namespace pgflow::internal {
namespace {

using Catalog = std::map<std::pair<std::string, std::string>, std::string>;

absl::StatusOr<Catalog> read_catalog(pg::Connection& conn, std::string_view schema) {
  PGFLOW_ASSIGN_OR_RETURN(pg::Result r, conn.exec(kCatalog, {std::string(schema)}));
  Catalog catalog;
  for (int i = 0; i < r.rows(); ++i) {
    catalog[{std::string(r.text(i, 0)), std::string(r.text(i, 1))}] = std::string(r.text(i, 2));
  }
  return catalog;
}

// The ledger (and its columns, key and index), which an earlier failed attempt of an older
// migrator may have created in the existing schema: not part of 0001.
bool is_ledger(std::string_view name) { return name.starts_with("schema_migrations"); }

bool defines_function_named(const Catalog& catalog, std::string_view function) {
  for (const auto& [key, def] : catalog) {
    if (key.first == "function" && key.second.starts_with(function) &&
        key.second.size() > function.size() && key.second[function.size()] == '(') {
      return true;
    }
  }
  return false;
}

// What differs between the existing schema and 0001's. Extra functions of other names are not
// differences: upstream's schema has helpers ours does not (e.g. the Supabase cron setup); they
// are kept.
std::vector<std::string> differences(const Catalog& existing, const Catalog& core) {
  std::vector<std::string> out;
  for (const auto& [key, def] : core) {
    const auto& [kind, name] = key;
    auto it = existing.find(key);
    if (it == existing.end()) {
      out.push_back(absl::StrCat("missing ", kind, " ", name));
    } else if (it->second != def) {
      out.push_back(
          absl::StrCat(kind, " ", name, " is \"", it->second, "\", expected \"", def, "\""));
    }
  }
  for (const auto& [key, def] : existing) {
    const auto& [kind, name] = key;
    if (core.contains(key) || is_ledger(name)) continue;
    if (kind != "function") {
      out.push_back(absl::StrCat("unexpected ", kind, " ", name));
    } else if (defines_function_named(core, name.substr(0, name.find('(')))) {
      // Another overload of one of ours could make calls ambiguous or take them over.
      out.push_back(absl::StrCat("unexpected overload function ", name));
    }
  }
  return out;
}

// 0001's top-level REVOKE statements (its privileges), to apply to the adopted schema.
std::vector<std::string_view> revokes_of(std::string_view sql) {
  std::vector<std::string_view> out;
  for (size_t at = sql.find("\nrevoke "); at != std::string_view::npos;
       at = sql.find("\nrevoke ", at + 1)) {
    const size_t end = sql.find(";\n", at);
    if (end == std::string_view::npos) break;
    out.push_back(sql.substr(at + 1, end - at));
  }
  return out;
}

absl::Status adopt(pg::Connection& conn, const EmbeddedMigration& core,
                   absl::FunctionRef<absl::Status()> record) {
  PGFLOW_ASSIGN_OR_RETURN(pg::Result taken, conn.exec(kSchemaExists, {kAdopting}));
  if (taken.scalar() == "t") {
    return absl::FailedPreconditionError(
        absl::StrCat("pgflow: cannot adopt the existing pgflow schema: a schema named ", kAdopting,
                     " exists (left by someone else?); drop or rename it first"));
  }
  PGFLOW_RETURN_IF_ERROR(conn.exec(kEmptySearchPath).status());
  PGFLOW_RETURN_IF_ERROR(conn.exec(kRenamePgflowAside).status());
  PGFLOW_RETURN_IF_ERROR(conn.exec_script(core.sql));

  PGFLOW_ASSIGN_OR_RETURN(Catalog existing, read_catalog(conn, kAdopting));
  PGFLOW_ASSIGN_OR_RETURN(Catalog expected, read_catalog(conn, "pgflow"));
  if (std::vector<std::string> diffs = differences(existing, expected); !diffs.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("pgflow: the existing pgflow schema (no migration ledger) is not upstream "
                     "pgflow 0.16.0's, which "
                     "0001_core reproduces, so it cannot be adopted; nothing was changed. If it is "
                     "an older upstream "
                     "release, upgrade it to upstream pgflow 0.16.0 with upstream's own migrations "
                     "first, then run "
                     "`pgflow migrate --adopt` again. Differences (",
                     diffs.size(), "):\n  ", absl::StrJoin(diffs, "\n  ")));
  }

  // The same shape: keep the existing schema (its data, sequences, privileges on tables and
  // extra functions) and give it 0001's function bodies and function privileges.
  PGFLOW_ASSIGN_OR_RETURN(pg::Result functions, conn.exec(kFunctionDefinitions));
  std::vector<std::string> definitions, signatures;
  for (int i = 0; i < functions.rows(); ++i) {
    definitions.emplace_back(functions.text(i, 0));
    signatures.emplace_back(functions.text(i, 1));
  }
  PGFLOW_RETURN_IF_ERROR(conn.exec(kDropPgflow).status());
  PGFLOW_RETURN_IF_ERROR(conn.exec(kRenameAdoptedBack).status());
  PGFLOW_RETURN_IF_ERROR(conn.exec(kNoFunctionBodyChecks).status());
  for (const std::string& definition : definitions)
    PGFLOW_RETURN_IF_ERROR(conn.exec_script(definition));
  for (std::string_view revoke : revokes_of(core.sql))
    PGFLOW_RETURN_IF_ERROR(conn.exec_script(revoke));
  // 0001's SECURITY DEFINER functions run as their owner: a role upstream granted them to keeps
  // that grant through CREATE OR REPLACE, so it is revoked (sql/contrib/grants.sql grants the
  // documented roles again).
  PGFLOW_ASSIGN_OR_RETURN(pg::Result grants,
                          conn.exec(kForeignDefinerGrants, {nlohmann::json(signatures).dump()}));
  for (int i = 0; i < grants.rows(); ++i)
    PGFLOW_RETURN_IF_ERROR(conn.exec(grants.text(i, 0)).status());
  return record();
}

}  // namespace

absl::StatusOr<bool> has_unrecorded_schema(pg::Connection& conn) {
  PGFLOW_ASSIGN_OR_RETURN(pg::Result ledger, conn.exec(kLedgerAndSchema));
  if (ledger.text(0, 1) != "t") return false;
  if (ledger.text(0, 0) != "t") return true;
  PGFLOW_ASSIGN_OR_RETURN(pg::Result recorded, conn.exec(kLedgerHasRows));
  return recorded.scalar() != "t";
}

absl::Status adopt_existing_schema(pg::Connection& conn, const EmbeddedMigration& core,
                                   absl::FunctionRef<absl::Status()> record) {
  return adopt(conn, core, record);
}

}  // namespace pgflow::internal
