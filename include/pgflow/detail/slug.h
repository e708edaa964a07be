// File: pgflow/detail/slug.h
//
// NOT API: the shared slug rules, as constexpr functions. The DSL checks slugs with them at
// compile time (static_assert in Flow and Flow::step), validate() checks hand-built
// definitions with them at run time, and SQL's pgflow.is_valid_slug implements the same
// rules; tests/data/slug_cases.tsv drives both test suites.
//
// A slug (flow or step):
//   - is not empty and at most 128 characters long;
//   - contains only ASCII letters, digits and underscores;
//   - starts with a letter (not a digit, not `_`) and does not end with `_`;
//   - contains no `__` (reserved for generated queue names such as `flow__step`);
//   - is not the reserved word `run` (exact, case-sensitive: `Run` is fine).
// A flow slug is also its PGMQ queue name, lower(flow_slug), so it is at most 47 characters.
// Spelling is preserved: slugs are never lowercased, but two step slugs of one flow must
// differ in more than letter case.
#ifndef PGFLOW_DETAIL_SLUG_H_
#define PGFLOW_DETAIL_SLUG_H_

#include <cstddef>
#include <string_view>

namespace pgflow::detail {

inline constexpr std::size_t kMaxSlugLength = 128;
inline constexpr std::size_t kMaxFlowSlugLength = 47;

// What is wrong with a slug; kNone when it is valid. When several rules are broken, the
// first in this order is reported.
enum class SlugProblem {
  kNone,
  kEmpty,
  kTooLong,
  kInvalidCharacter,
  kLeadingDigit,
  kLeadingUnderscore,
  kTrailingUnderscore,
  kDoubleUnderscore,
  kReserved,
};

constexpr bool is_ascii_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
constexpr bool is_ascii_digit(char c) { return c >= '0' && c <= '9'; }
constexpr char ascii_lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

constexpr SlugProblem slug_problem(std::string_view slug) {
  if (slug.empty()) return SlugProblem::kEmpty;
  if (slug.size() > kMaxSlugLength) return SlugProblem::kTooLong;
  for (char c : slug) {
    if (!is_ascii_letter(c) && !is_ascii_digit(c) && c != '_')
      return SlugProblem::kInvalidCharacter;
  }
  if (is_ascii_digit(slug.front())) return SlugProblem::kLeadingDigit;
  if (slug.front() == '_') return SlugProblem::kLeadingUnderscore;
  if (slug.back() == '_') return SlugProblem::kTrailingUnderscore;
  if (slug.find("__") != std::string_view::npos) return SlugProblem::kDoubleUnderscore;
  if (slug == "run") return SlugProblem::kReserved;
  return SlugProblem::kNone;
}

// A sentence describing the broken rule, or nullptr when `slug` is a valid slug.
constexpr const char* slug_error(std::string_view slug) {
  switch (slug_problem(slug)) {
    case SlugProblem::kNone:
      return nullptr;
    case SlugProblem::kEmpty:
      return "a slug cannot be empty";
    case SlugProblem::kTooLong:
      return "a slug can be at most 128 characters long";
    case SlugProblem::kInvalidCharacter:
      return "a slug can contain only ASCII letters, digits and underscores";
    case SlugProblem::kLeadingDigit:
      return "a slug must start with a letter, not a digit";
    case SlugProblem::kLeadingUnderscore:
      return "a slug must start with a letter, not '_'";
    case SlugProblem::kTrailingUnderscore:
      return "a slug cannot end with '_'";
    case SlugProblem::kDoubleUnderscore:
      return "a slug cannot contain '__' (reserved for generated queue names)";
    case SlugProblem::kReserved:
      return "'run' is a reserved word and cannot be a slug";
  }
  return "invalid slug";
}

// Like slug_error, plus the flow-only rule: the flow slug names the flow's PGMQ queue,
// which is at most 47 characters long.
constexpr const char* flow_slug_error(std::string_view slug) {
  if (const char* error = slug_error(slug)) return error;
  if (slug.size() > kMaxFlowSlugLength) {
    return "a flow slug can be at most 47 characters long (it names the flow's queue)";
  }
  return nullptr;
}

// True when `a` and `b` are equal ignoring ASCII letter case (`fetch` vs `Fetch`).
constexpr bool equal_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  }
  return true;
}

// ---- step queue names (queue mode `step`, SQL: pgflow._step_queue_name) ----------------------

inline constexpr std::size_t kMaxQueueNameLength = 47;

constexpr std::size_t decimal_digits(std::size_t n) {
  std::size_t digits = 1;
  while (n >= 10) {
    n /= 10;
    ++digits;
  }
  return digits;
}

// Which private queue name step number `index` (zero-based) of a step-queued flow gets:
// lower(flow__step) when it fits PGMQ's 47 characters, else lower(flow__index), else none (the
// flow cannot use step queues). tests/data/step_queue_names.tsv drives this and the SQL.
enum class StepQueueNaming { kReadable, kIndex, kTooLong };
constexpr StepQueueNaming step_queue_naming(std::string_view flow, std::string_view step,
                                            std::size_t index) {
  if (flow.size() + 2 + step.size() <= kMaxQueueNameLength) return StepQueueNaming::kReadable;
  if (flow.size() + 2 + decimal_digits(index) <= kMaxQueueNameLength)
    return StepQueueNaming::kIndex;
  return StepQueueNaming::kTooLong;
}

}  // namespace pgflow::detail

#endif  // PGFLOW_DETAIL_SLUG_H_
