#include "internal/timestamps.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "internal/strings.h"

namespace pgflow::internal {

absl::StatusOr<absl::Time> parse_timestamp(std::string_view text) {
  // PostgreSQL's special values (possible only if someone wrote them).
  if (text == "infinity") return absl::InfiniteFuture();
  if (text == "-infinity") return absl::InfinitePast();
  absl::Time t;
  std::string error;
  // %E*S: seconds with an optional fraction (PostgreSQL omits ".000000"); %Ez: +hh:mm.
  if (absl::ParseTime("%Y-%m-%dT%H:%M:%E*S%Ez", absl_view(text), &t, &error)) return t;
  return absl::InternalError(absl::StrCat("pgflow: the database sent an unreadable timestamp \"",
                                          absl_view(text), "\" (", error, ")"));
}

absl::StatusOr<std::optional<absl::Time>> json_timestamp(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::optional<absl::Time>();
  if (!it->is_string())
    return absl::InternalError(absl::StrCat("pgflow: ", key, " is not a timestamp"));
  absl::StatusOr<absl::Time> t = parse_timestamp(it->get_ref<const std::string&>());
  if (!t.ok()) return t.status();
  return std::optional<absl::Time>(*t);
}

}  // namespace pgflow::internal
