#include "pg/error.h"

#include <string>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "internal/strings.h"
#include "pgflow/status.h"

namespace pgflow::pg {

absl::StatusCode code_for_sqlstate(std::string_view s) {
  using C = absl::StatusCode;
  auto cls = [&](std::string_view prefix) { return s.substr(0, 2) == prefix; };
  if (s.empty() || cls("08")) return C::kUnavailable;    // connection exception
  if (s == "40001" || s == "40P01") return C::kAborted;  // serialization failure, deadlock
  if (s == "55P03") return C::kAborted;                  // lock_not_available (lock_timeout)
  if (s == "23505") return C::kAlreadyExists;
  if (s == "23503") return C::kFailedPrecondition;  // foreign key: a referenced row is missing
  if (cls("23") || cls("22")) return C::kInvalidArgument;  // constraint / data exception
  if (cls("54"))
    return C::kInvalidArgument;  // program limit exceeded (a value too big to store or index)
  if (cls("53")) return C::kResourceExhausted;
  if (s == "57014") return C::kCancelled;  // query_canceled (statement_timeout)
  if (cls("57")) return C::kUnavailable;   // server shutting down / starting
  if (s == "42501") return C::kPermissionDenied;
  if (cls("28")) return C::kUnauthenticated;
  if (s == "42P01" || s == "42883" || s == "3F000")
    return C::kFailedPrecondition;        // schema missing
  if (s == "3D000") return C::kNotFound;  // database does not exist
  if (s == "P0002") return C::kNotFound;
  if (s == "P0001" || cls("25") || cls("55")) return C::kFailedPrecondition;
  if (s == "0A000") return C::kUnimplemented;
  if (cls("XX")) return C::kInternal;
  if (cls("42")) return C::kInvalidArgument;  // syntax error or access rule
  return C::kUnknown;
}

absl::Status database_error(std::string_view sqlstate, std::string_view message) {
  absl::StatusCode code = code_for_sqlstate(sqlstate);
  std::string text(message);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (sqlstate == "42P01" &&
      (absl::StrContains(text, "\"pgmq.q_") || absl::StrContains(text, "\"pgmq.a_"))) {
    // The schema is there but a queue lost a table: migrating would not bring it back.
    text +=
        " (a PGMQ queue table is missing: the queue was dropped or damaged outside pgflow; "
        "restore it deliberately with pgmq.create, or use another flow slug)";
  } else if (sqlstate == "42P01" || sqlstate == "42883" || sqlstate == "3F000") {
    text += " (is the pgflow schema installed? run `pgflow migrate`)";
  }
  absl::Status status(code, text);
  if (!sqlstate.empty()) status.SetPayload(kSqlStatePayload, absl::Cord(std::string(sqlstate)));
  return status;
}

absl::Status with_message(const absl::Status& status, std::string message) {
  absl::Status out(status.code(), std::move(message));
  status.ForEachPayload(
      [&](absl::string_view url, const absl::Cord& payload) { out.SetPayload(url, payload); });
  return out;
}

namespace {

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// libpq's own texts (fe-connect.c) for connection strings it refuses before contacting a
// server.
bool rejected_by_libpq(std::string_view error) {
  return contains(error, "invalid port number") ||
         (error.starts_with("invalid ") &&
          contains(error, " value: \"")) ||                     // sslmode, gssencmode, ...
         contains(error, "invalid integer value") ||            // connect_timeout, keepalives...
         contains(error, "could not match ") ||                 // host/port/hostaddr counts
         contains(error, "could not parse network address") ||  // hostaddr
         contains(error, "invalid SSL protocol version range") ||
         contains(error, "invalid when SSL support is not compiled in") ||
         contains(error, "invalid connection option") ||
         contains(error, "in connection info string") ||  // missing "=", unterminated quote
         contains(error, " URI") ||
         contains(error, "percent-encoded");  // malformed postgresql:// URI
}

std::string_view server_refusal_sqlstate(std::string_view error) {
  if (contains(error, "password authentication failed") ||
      contains(error, "no password supplied")) {
    return "28P01";
  }
  if (contains(error, "no pg_hba.conf entry")) return "28000";
  if (contains(error, "role \"") && contains(error, "does not exist")) return "28000";
  if (contains(error, "database \"") && contains(error, "does not exist")) return "3D000";
  if (contains(error, "is not permitted to log in")) return "28000";
  if (contains(error, "permission denied for database")) return "42501";
  return "08001";
}

}  // namespace

absl::Status connection_failure(std::string_view target, std::string_view libpq_error) {
  const std::string message = absl::StrCat("cannot connect to ", internal::absl_view(target), ": ",
                                           internal::absl_view(libpq_error));
  if (rejected_by_libpq(libpq_error)) {
    return absl::InvalidArgumentError(
        absl::StrCat("pgflow: ", message, " (the connection string is invalid)"));
  }
  return database_error(server_refusal_sqlstate(libpq_error), message);
}

bool is_missing_function(const absl::Status& status) { return sql_state(status) == "42883"; }

bool is_transient(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kDeadlineExceeded:
      return true;
    default:
      return false;
  }
}

}  // namespace pgflow::pg
