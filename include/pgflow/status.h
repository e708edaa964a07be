// File: pgflow/status.h
//
// pgflow reports every failure as an absl::Status (or absl::StatusOr<T>); no exception
// crosses the API. Database errors are mapped from their SQLSTATE to the closest canonical
// code (see docs/errors.md), and the raw SQLSTATE travels with the status as a payload:
//
//   absl::Status s = pgflow::migrate(url);
//   if (pgflow::sql_state(s) == "55P03") { /* lock not available: retry later */ }
//
// A handler's failure is retried up to the step's max_attempts, with backoff. One that no
// retry can fix is marked permanent, and fails its task at once:
//
//   if (!customer) return pgflow::permanent(absl::NotFoundError("no such customer"));
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

// The payload type URL that marks a failure as permanent.
inline constexpr char kPermanentPayload[] = "type.pgflow.dev/permanent";

// `status` marked permanent (its code and message unchanged). A handler that returns it fails
// its task at once, whatever attempts remain: the step then ends as its when_exhausted mode
// says (by default the run fails), and the task's error message ends with "(permanent: not
// retried)". pgflow marks its own conversion failures so (docs/flows.md, "Failures that no
// retry can fix"). An OK status is returned unchanged.
absl::Status permanent(absl::Status status);

// True when `status` was marked with pgflow::permanent.
bool is_permanent(const absl::Status& status);

}  // namespace pgflow

#endif  // PGFLOW_STATUS_H_
