// File: pgflow/status.h
//
// pgflow reports every failure as an absl::Status (or absl::StatusOr<T>); no exception
// crosses the API. Database errors are mapped from their SQLSTATE to the closest canonical
// code (see docs/errors.md), and the raw SQLSTATE travels with the status as a payload:
//
//   absl::Status s = pgflow::migrate(url);
//   if (pgflow::sql_state(s) == "55P03") { /* lock not available: retry later */ }
#ifndef PGFLOW_STATUS_H_
#define PGFLOW_STATUS_H_

#include <optional>
#include <string>

#include "absl/status/status.h"

namespace pgflow {

// The payload type URL under which a database error's SQLSTATE is stored.
inline constexpr char kSqlStatePayload[] = "type.pgflow.dev/sqlstate";

// The five-character SQLSTATE of a database error, or nullopt when `status` did not come
// from the database (or is OK).
std::optional<std::string> sql_state(const absl::Status& status);

}  // namespace pgflow

#endif  // PGFLOW_STATUS_H_
