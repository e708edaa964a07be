#include "worker/task_rows.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "internal/text_checks.h"

namespace pgflow::internal {
namespace {

// Error texts may carry invalid UTF-8 (outputs are checked by the reporter); replace it rather
// than throw.
constexpr auto kReplaceInvalidUtf8 = nlohmann::json::error_handler_t::replace;

// Whether `j` nests deeper than kMaxJsonDepth. nlohmann parses and destroys any depth without
// recursion, but copies once per level: a handler's copy of such an input could overflow its
// thread's stack (jsonb takes what PostgreSQL's stack allows, some thousands of levels).
bool too_deep(const nlohmann::json& j) {
  std::vector<std::pair<const nlohmann::json*, int>> stack{{&j, 0}};
  while (!stack.empty()) {
    const auto [node, depth] = stack.back();
    stack.pop_back();
    if (depth >= kMaxJsonDepth) return true;
    for (const nlohmann::json& child : *node) {
      if (child.is_structured()) stack.emplace_back(&child, depth + 1);
    }
  }
  return false;
}

}  // namespace

std::optional<nlohmann::json> parse_json(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

absl::StatusOr<nlohmann::json> read_input(std::string_view text) {
  std::optional<nlohmann::json> j = parse_json(text);
  if (!j) {
    return absl::InvalidArgumentError(
        "is not JSON this worker can read (a number beyond the range of a double, or text that "
        "is not UTF-8)");
  }
  if (j->is_structured() && too_deep(*j)) {
    return absl::InvalidArgumentError(absl::StrCat("is nested deeper than ", kMaxJsonDepth,
                                                   " levels, deeper than this worker reads"));
  }
  return *std::move(j);
}

std::string task_rows(const std::vector<TaskResult>& results, bool completions) {
  nlohmann::json rows = nlohmann::json::array();
  for (const TaskResult& r : results) {
    nlohmann::json row = {
        {"run_id", r.run_id}, {"step_slug", r.step_slug}, {"task_index", r.task_index}};
    if (completions) {
      row["output"] = r.output;
    } else {
      row["error_message"] = r.error_message;
      if (r.permanent) row["permanent"] = true;
      if (!r.claim_id.empty()) row["claim_id"] = r.claim_id;
    }
    rows.push_back(std::move(row));
  }
  return rows.dump(-1, ' ', false, kReplaceInvalidUtf8);
}

std::vector<ReportedTask> reported(const pg::Result& rows) {
  std::vector<ReportedTask> out;
  for (int i = 0; i < rows.rows(); ++i)
    out.push_back({std::string(rows.text(i, 0)), std::string(rows.text(i, 1))});
  return out;
}

}  // namespace pgflow::internal
