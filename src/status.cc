// pgflow/status.h: the payloads pgflow attaches to a status.
#include "pgflow/status.h"

#include <optional>
#include <string>
#include <utility>

#include "absl/strings/cord.h"

namespace pgflow {

std::optional<std::string> sql_state(const absl::Status& status) {
  absl::optional<absl::Cord> payload = status.GetPayload(kSqlStatePayload);
  if (!payload) return std::nullopt;
  return std::string(*payload);
}

absl::Status permanent(absl::Status status) {
  status.SetPayload(kPermanentPayload, absl::Cord());  // no-op on an OK status
  return status;
}

bool is_permanent(const absl::Status& status) {
  return status.GetPayload(kPermanentPayload).has_value();
}

}  // namespace pgflow
