// timestamptz values as the SQL core sends them in JSON (to_jsonb: ISO 8601 with a numeric
// offset, e.g. "2026-12-01T14:16:38.123456+00:00"), turned into absl::Time.
#ifndef PGFLOW_INTERNAL_TIMESTAMPS_H_
#define PGFLOW_INTERNAL_TIMESTAMPS_H_

#include <optional>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace pgflow::internal {

// kInternal naming the text when it is not such a timestamp (the database sent something else).
absl::StatusOr<absl::Time> parse_timestamp(std::string_view text);

// j[key] as a time: nullopt when absent or null; an error when it is not a timestamp.
absl::StatusOr<std::optional<absl::Time>> json_timestamp(const nlohmann::json& j, const char* key);

}  // namespace pgflow::internal

#endif  // PGFLOW_INTERNAL_TIMESTAMPS_H_
