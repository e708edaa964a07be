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

// The status of a connection attempt libpq refused with `libpq_error` (text only: libpq gives
// no SQLSTATE), to `target` (described without its password). A connection string libpq
// rejects itself (an option value it cannot use: port=notaport, sslmode=bogus,
// connect_timeout=soon, ...) is kInvalidArgument at once: no retry can fix it. Refusals by the
// server that retrying cannot fix get the server's SQLSTATE (a bad password 28P01, an unknown
// role or one that may not log in 28000, an unknown database 3D000, no CONNECT 42501).
// Everything else is 08001, kUnavailable and transient: refused, reset, timed out, starting up,
// too many clients, and a host name that does not resolve (DNS may be catching up).
absl::Status connection_failure(std::string_view target, std::string_view libpq_error);

// True for errors worth retrying after a pause: lost connections, serialization failures,
// deadlocks, lock timeouts, resource exhaustion and server shutdown.
bool is_transient(const absl::Status& status);

// True when the statement called a function the database does not have (SQLSTATE 42883): its
// pgflow schema is older than the function.
bool is_missing_function(const absl::Status& status);

// The same error — code, SQLSTATE and any other payload — with another message (e.g. one that
// names what was being done).
absl::Status with_message(const absl::Status& status, std::string message);

}  // namespace pgflow::pg

#endif  // PGFLOW_PG_ERROR_H_
