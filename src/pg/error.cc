#include "pg/error.h"

#include <string>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
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

namespace pgflow {

std::optional<std::string> sql_state(const absl::Status& status) {
  absl::optional<absl::Cord> payload = status.GetPayload(kSqlStatePayload);
  if (!payload) return std::nullopt;
  return std::string(*payload);
}

}  // namespace pgflow
