// The JSON the worker's statements exchange with the SQL core: inputs read from claimed rows,
// result batches sent to complete_tasks / fail_tasks, and the rows those answer with.
#ifndef PGFLOW_WORKER_TASK_ROWS_H_
#define PGFLOW_WORKER_TASK_ROWS_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "pg/connection.h"
#include "worker/store.h"

namespace pgflow::internal {

// `text` parsed, or nullopt when it is not JSON nlohmann reads.
std::optional<nlohmann::json> parse_json(std::string_view text);

// A task's or a run's input as the worker reads it; else what keeps it from being read (to
// follow "the input ...").
absl::StatusOr<nlohmann::json> read_input(std::string_view text);

// The jsonb array of `results` a batch statement takes: outputs with `completions`, else
// error messages (invalid UTF-8 in them replaced).
std::string task_rows(const std::vector<TaskResult>& results, bool completions);

// The (step slug, status) rows a batch statement answers with.
std::vector<ReportedTask> reported(const pg::Result& rows);

}  // namespace pgflow::internal

#endif  // PGFLOW_WORKER_TASK_ROWS_H_
