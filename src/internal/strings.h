// Bridges std::string_view to Debian's Abseil, whose absl::string_view is its own type
// (ABSL_OPTION_USE_STD_STRING_VIEW is 0 there).
#ifndef PGFLOW_INTERNAL_STRINGS_H_
#define PGFLOW_INTERNAL_STRINGS_H_

#include <string>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/string_view.h"

namespace pgflow::internal {

// `s` as Abseil's string_view: Debian's Abseil does not alias it to std::string_view, so
// StrCat and friends need this conversion.
inline absl::string_view absl_view(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

// ASCII-lowercased copy: slugs are ASCII, and a flow's queue is lower(flow_slug).
inline std::string ascii_lower(std::string_view s) { return absl::AsciiStrToLower(absl_view(s)); }

}  // namespace pgflow::internal

#endif  // PGFLOW_INTERNAL_STRINGS_H_
