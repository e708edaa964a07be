#include "verify.h"

#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "pg/connection.h"
#include "soak_flow.h"

namespace pgflow::soak {

namespace {

constexpr std::size_t kMaxProblems = 20;

// (Debian's Abseil has its own string_view: results are copied to std::string for absl calls.)
std::string text(const pg::Result& r, int row, int col) { return std::string(r.text(row, col)); }

std::int64_t integer(const pg::Result& r, int row, int col) {
  std::int64_t v = 0;
  (void)absl::SimpleAtoi(text(r, row, col), &v);
  return v;
}

// One line per task of a lost run: what the database says happened to it.
std::string describe_run(pg::Connection& conn, const std::string& run_id, const std::string& what) {
  std::string out = absl::StrCat("run ", run_id, ": ", what);
  absl::StatusOr<pg::Result> steps = conn.exec(
      "select s.step_slug, s.status, coalesce(t.task_index::text, '-'), coalesce(t.status, '-'), "
      "       coalesce(t.attempts_count, 0), coalesce(t.requeued_count, 0), "
      "       t.permanently_stalled_at is not null, coalesce(t.error_message, '') "
      "from pgflow.step_states s left join pgflow.step_tasks t using (run_id, step_slug) "
      "where s.run_id = $1::uuid order by s.step_slug, t.task_index",
      {run_id});
  if (!steps.ok()) return absl::StrCat(out, " (steps unreadable: ", steps.status().ToString(), ")");
  for (int i = 0; i < steps->rows(); ++i) {
    const std::string error = text(*steps, i, 7);
    absl::StrAppend(&out, "\n    ", text(*steps, i, 0), " ", text(*steps, i, 1), " task ",
                    text(*steps, i, 2), " ", text(*steps, i, 3), " attempts=", text(*steps, i, 4),
                    " requeued=", text(*steps, i, 5),
                    text(*steps, i, 6) == "t" ? " permanently-stalled" : "",
                    error.empty() ? "" : absl::StrCat(" error=\"", error, "\""));
  }
  return out;
}

}  // namespace

absl::StatusOr<std::int64_t> unfinished_runs(const std::string& url) {
  absl::StatusOr<pg::Connection> conn = pg::Connection::open(url, "pgflow-soak");
  if (!conn.ok()) return conn.status();
  absl::StatusOr<pg::Result> left = conn->exec(
      "select count(*) from pgflow.runs where flow_slug = $1 and status = 'started'", {kFlowSlug});
  if (!left.ok()) return left.status();
  return integer(*left, 0, 0);
}

absl::StatusOr<Verification> verify(const std::string& url, const std::vector<StartedRun>& runs,
                                    const std::vector<StartedRun>& abandoned,
                                    const ExecutionsByTask& executions) {
  absl::StatusOr<pg::Connection> conn = pg::Connection::open(url, "pgflow-soak");
  if (!conn.ok()) return conn.status();
  Verification v;

  // ---- runs ----
  struct DbRun {
    std::string status;
    std::string input;
    std::string output;
  };
  std::map<std::string, DbRun> in_db;
  absl::StatusOr<pg::Result> rows = conn->exec(
      "select run_id::text, status, input::text, coalesce(output::text, 'null') from pgflow.runs "
      "where flow_slug = $1",
      {kFlowSlug});
  if (!rows.ok()) return rows.status();
  for (int i = 0; i < rows->rows(); ++i) {
    in_db[std::string(rows->text(i, 0))] = {std::string(rows->text(i, 1)),
                                            std::string(rows->text(i, 2)),
                                            std::string(rows->text(i, 3))};
  }
  auto problem = [&](const std::string& run_id, const std::string& what) {
    if (v.problems.size() < kMaxProblems) v.problems.push_back(describe_run(*conn, run_id, what));
  };
  std::vector<StartedRun> to_check = runs;
  for (const StartedRun& run : abandoned) {
    if (in_db.contains(run.run_id)) to_check.push_back(run);  // it did start: it must finish too
  }
  for (const StartedRun& run : to_check) {
    ++v.runs;
    auto it = in_db.find(run.run_id);
    if (it == in_db.end()) {
      ++v.missing;
      problem(run.run_id, "acknowledged by start_run but not in the database");
      continue;
    }
    const DbRun& db = it->second;
    if (db.status == "started") {
      ++v.unfinished;
      problem(run.run_id, "still started");
    } else if (db.status != "completed") {
      ++v.failed;
      problem(run.run_id, db.status);
    } else if (nlohmann::json::parse(db.output, nullptr, false) != expected_output(run.input) ||
               nlohmann::json::parse(db.input, nullptr, false) != nlohmann::json(run.input)) {
      ++v.wrong_output;
      problem(run.run_id,
              absl::StrCat("completed with output ", db.output, ", expected ",
                           expected_output(run.input).dump(), " (input ", db.input, ")"));
    } else {
      ++v.completed_ok;
    }
    in_db.erase(it);
  }
  v.unknown = static_cast<std::int64_t>(in_db.size());

  // ---- tasks, against the execution log ----
  absl::StatusOr<pg::Result> tasks = conn->exec(
      "select run_id::text, step_slug, task_index, status, attempts_count, requeued_count, "
      "       (permanently_stalled_at is not null)::int "
      "from pgflow.step_tasks where flow_slug = $1",
      {kFlowSlug});
  if (!tasks.ok()) return tasks.status();
  for (int i = 0; i < tasks->rows(); ++i) {
    const TaskKey key{std::string(tasks->text(i, 0)), std::string(tasks->text(i, 1)),
                      static_cast<int>(integer(*tasks, i, 2))};
    const std::int64_t attempts = integer(*tasks, i, 4);
    ++v.tasks;
    v.attempts += attempts;
    v.requeued += integer(*tasks, i, 5);
    v.permanently_stalled += integer(*tasks, i, 6);
    auto it = executions.find(key);
    const std::int64_t ran =
        it == executions.end() ? 0 : static_cast<std::int64_t>(it->second.size());
    if (tasks->text(i, 3) == "completed" && ran == 0) {
      ++v.completed_without_execution;
      if (v.cross_check_samples.size() < 10) {
        v.cross_check_samples.push_back(absl::StrCat(key.run_id, "/", key.step, "[", key.task_index,
                                                     "]: completed, no execution recorded"));
      }
    }
    if (ran > attempts) {
      v.executions_beyond_attempts += ran - attempts;
      if (v.cross_check_samples.size() < 10) {
        v.cross_check_samples.push_back(absl::StrCat(key.run_id, "/", key.step, "[", key.task_index,
                                                     "]: ", ran, " executions, ", attempts,
                                                     " attempts"));
      }
    }
  }
  return v;
}

}  // namespace pgflow::soak
