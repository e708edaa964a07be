// SQLSTATE -> absl::StatusCode, in one place. The raw SQLSTATE rides along as a payload
// (see pgflow/status.h).
#ifndef PGFLOW_PG_ERROR_H_
#define PGFLOW_PG_ERROR_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace pgflow::pg {

// The canonical code for a SQLSTATE; "" (no SQLSTATE: the connection failed) is kUnavailable.
absl::StatusCode code_for_sqlstate(std::string_view sqlstate);

// A status with the mapped code, `message`, and the SQLSTATE payload.
absl::Status database_error(std::string_view sqlstate, std::string_view message);

// True for errors worth retrying after a pause: lost connections, serialization failures,
// deadlocks, lock timeouts, resource exhaustion and server shutdown.
bool is_transient(const absl::Status& status);

// The same error — code, SQLSTATE and any other payload — with another message (e.g. one that
// names what was being done).
absl::Status with_message(const absl::Status& status, std::string message);

}  // namespace pgflow::pg

#endif  // PGFLOW_PG_ERROR_H_
