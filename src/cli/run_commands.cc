// runs, run show|cancel|retry|resume, start [--wait]: runs and their steps.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cli/cli.h"
#include "cli/output.h"
#include "cli/statements.h"
#include "client/rereads.h"
#include "internal/text_checks.h"

namespace pgflow::cli {
namespace {

std::string display_status(const nlohmann::json& run) {
  return run["cancelled"].get<bool>() ? "cancelled" : run["status"].get<std::string>();
}

// RUN_ID arguments are checked before anything is sent.
// A run id as PostgreSQL's uuid type reads it (the rule the library checks with, too).
const CLI::Validator kUuid(
    [](std::string& v) -> std::string {
      return internal::is_uuid(v)
                 ? ""
                 : "not a run id (a UUID such as 8c5e...-...): " + internal::printable(v);
    },
    "UUID");

struct RunsOptions {
  std::optional<std::string> flow, status, since;
  int limit = 50;
};

// --since: a duration back from now ("2h", "7d") or an RFC 3339 time.
std::optional<absl::Time> since_time(const std::string& since) {
  if (std::optional<absl::Duration> d = parse_duration(since)) return absl::Now() - *d;
  absl::Time t;
  std::string error;
  if (absl::ParseTime(absl::RFC3339_full, since, &t, &error)) return t;
  return std::nullopt;
}

int list_runs(const Globals& g, const RunsOptions& o) {
  absl::StatusOr<pg::Connection> conn = open_pgflow(g);
  if (!conn.ok()) return fail(conn.status());
  std::optional<std::string> since;
  if (o.since) since = rfc3339(*since_time(*o.since));
  absl::StatusOr<nlohmann::json> listed =
      query_json(*conn, kRunsQuery, {o.flow, o.status, since, std::to_string(o.limit)});
  if (!listed.ok()) return fail(listed.status());
  if (g.json) {
    print_json(*listed);
    return kOk;
  }
  Table table({"RUN ID", "FLOW", "ALIAS", "STATUS", "STARTED", "TOOK", "STEPS DONE"});
  for (const auto& r : (*listed)["runs"]) {
    const long long total = r["steps_total"], remaining = r["steps_remaining"];
    table.add_row({r["run_id"], r["flow_slug"], display_text(r["flow_alias"]), display_status(r),
                   timestamp_text(r["started_at"]), span_text(r["started_at"], r["ended_at"]),
                   absl::StrCat(total - remaining, "/", total)});
  }
  table.print();
  if ((*listed)["truncated"].get<bool>())
    std::printf("(the newest %d; more runs match: --limit N shows more)\n", o.limit);
  return kOk;
}

absl::StatusOr<nlohmann::json> read_run(const Globals& g, const std::string& run_id) {
  absl::StatusOr<pg::Connection> conn = open_pgflow(g);
  if (!conn.ok()) return conn.status();
  absl::StatusOr<nlohmann::json> run = query_json(*conn, kRunQuery, {run_id});
  if (run.ok() && run->is_null())
    return absl::NotFoundError(absl::StrCat("run ", run_id, " does not exist"));
  return run;
}

void print_run(const nlohmann::json& run) {
  const std::string status = display_status(run);
  const nlohmann::json& ended =
      run["completed_at"].is_null() ? run["failed_at"] : run["completed_at"];
  std::printf("run %s  flow %s  %s", display_text(run["run_id"]).c_str(),
              display_text(run["flow_slug"]).c_str(), status.c_str());
  if (!ended.is_null()) std::printf(" after %s", span_text(run["started_at"], ended).c_str());
  std::printf("\nstarted %s", timestamp_text(run["started_at"]).c_str());
  if (!ended.is_null()) std::printf(", ended %s", timestamp_text(ended).c_str());
  std::printf("\n");
  if (run["cancelled"].get<bool>())
    std::printf("cancelled: %s\n", display_text(run["cancel_reason"]).c_str());
  if (!run["restart_of_run_id"].is_null())
    std::printf("retry of run %s\n", display_text(run["restart_of_run_id"]).c_str());
  std::printf("\n");
  Table table({"STEP", "TYPE", "STATUS", "ATTEMPTS", "STARTED", "TOOK", "TASKS / ERROR"});
  for (const auto& s : run["steps"]) {
    const nlohmann::json& end =
        !s["completed_at"].is_null()
            ? s["completed_at"]
            : (!s["failed_at"].is_null() ? s["failed_at"] : s["skipped_at"]);
    std::string detail;
    if (s["step_type"] == "map" && s["tasks_total"].is_number()) {
      detail =
          progress_bar(s["tasks_completed"].get<long long>(), s["tasks_total"].get<long long>());
    }
    for (const char* why : {"error_message", "last_task_error", "skip_reason"}) {
      if (s[why].is_null() || (std::string(why) == "last_task_error" && s["status"] == "completed"))
        continue;
      detail += (detail.empty() ? "" : "  ") +
                std::string(std::string(why) == "skip_reason" ? "skipped: " : "") +
                display_text(s[why]);
      break;
    }
    // A wait step says what its tasks wait for, and until when.
    if (const long long waiting = s.value("tasks_waiting", 0LL); waiting > 0) {
      absl::StrAppend(&detail, detail.empty() ? "" : "  ",
                      s["waits_for"] == "sleep" ? "sleeping" : "waiting for a signal",
                      waiting > 1 ? absl::StrCat(" (", waiting, " tasks)") : "",
                      s["wakes_at"].is_null() ? "" : " until " + timestamp_text(s["wakes_at"]));
    }
    // A cancelled run's steps say which of their tasks the cancellation stopped.
    if (const long long cancelled = s.value("tasks_cancelled", 0LL); cancelled > 0) {
      absl::StrAppend(&detail, detail.empty() ? "" : "  ", "(", cancelled,
                      cancelled == 1 ? " task cancelled)" : " tasks cancelled)");
    }
    const std::string step_status =
        s.value("tasks_waiting", 0LL) > 0 ? "waiting" : s["status"].get<std::string>();
    table.add_row({s["step_slug"], s["step_type"], step_status, display_text(s["attempts"]),
                   timestamp_text(s["started_at"]), span_text(s["started_at"], end), detail});
  }
  table.print();
  if (!run["output"].is_null()) std::printf("\noutput: %s\n", json_text(run["output"]).c_str());
}

int show_run(const Globals& g, const std::string& run_id) {
  absl::StatusOr<nlohmann::json> run = read_run(g, run_id);
  if (!run.ok()) return fail(run.status());
  if (g.json) {
    print_json(*run);
  } else {
    print_run(*run);
  }
  return kOk;
}

struct ControlOptions {
  std::string run_id;
  std::optional<std::string> reason, new_run_id;
  int priority = 0;
};

int cancel(const Globals& g, const ControlOptions& o) {
  absl::StatusOr<Client> client = connect_client(g);
  if (!client.ok()) return fail(client.status());
  absl::StatusOr<bool> cancelled = client->cancel_run(o.run_id, o.reason);
  if (!cancelled.ok()) return fail(cancelled.status());
  if (g.json) {
    print_json({{"run_id", o.run_id}, {"cancelled", *cancelled}});
  } else {
    std::printf(
        *cancelled ? "run %s cancelled\n" : "run %s had already finished: nothing changed\n",
        o.run_id.c_str());
  }
  return kOk;
}

int retry(const Globals& g, const ControlOptions& o) {
  absl::StatusOr<Client> client = connect_client(g);
  if (!client.ok()) return fail(client.status());
  absl::StatusOr<std::string> retry = client->retry_run(o.run_id, o.new_run_id);
  if (!retry.ok()) return fail(retry.status());
  if (g.json) {
    print_json({{"run_id", o.run_id}, {"new_run_id", *retry}});
  } else {
    std::printf("run %s retried as run %s\n", o.run_id.c_str(), retry->c_str());
  }
  return kOk;
}

int resume(const Globals& g, const ControlOptions& o) {
  absl::StatusOr<Client> client = connect_client(g);
  if (!client.ok()) return fail(client.status());
  absl::StatusOr<RunState> resumed = client->resume_run(o.run_id);
  if (!resumed.ok()) return fail(resumed.status());
  const std::string status(to_string(resumed->status));
  if (g.json) {
    print_json({{"run_id", o.run_id}, {"status", status}});
  } else {
    std::printf("run %s resumed: %s\n", o.run_id.c_str(), status.c_str());
  }
  return kOk;
}

struct SignalOptions {
  std::string run_id, step, signal_id;
  std::string payload = "null";
  int task_index = 0;
};

int signal_step(const Globals& g, const SignalOptions& o) {
  absl::StatusOr<Client> client = connect_client(g);
  if (!client.ok()) return fail(client.status());
  absl::StatusOr<SignalOutcome> sent = client->send_signal(
      o.run_id, o.step, o.signal_id, nlohmann::json::parse(o.payload), o.task_index);
  if (!sent.ok()) return fail(sent.status());
  const std::string outcome(to_string(*sent));
  if (g.json) {
    print_json({{"run_id", o.run_id},
                {"step_slug", o.step},
                {"task_index", o.task_index},
                {"signal_id", o.signal_id},
                {"outcome", outcome}});
  } else if (*sent == SignalOutcome::kDelivered) {
    std::printf("signal %s delivered: step %s of run %s completed\n", o.signal_id.c_str(),
                o.step.c_str(), o.run_id.c_str());
  } else if (*sent == SignalOutcome::kBuffered) {
    std::printf("signal %s buffered: step %s of run %s takes it when it starts waiting\n",
                o.signal_id.c_str(), o.step.c_str(), o.run_id.c_str());
  } else {
    std::printf("signal %s was already sent to step %s of run %s: nothing changed\n",
                o.signal_id.c_str(), o.step.c_str(), o.run_id.c_str());
  }
  return kOk;
}

int prioritize(const Globals& g, const ControlOptions& o) {
  absl::StatusOr<Client> client = connect_client(g);
  if (!client.ok()) return fail(client.status());
  if (absl::Status s = client->set_run_priority(o.run_id, o.priority); !s.ok()) return fail(s);
  if (g.json) {
    print_json({{"run_id", o.run_id}, {"priority", o.priority}});
  } else {
    std::printf("run %s: priority %d\n", o.run_id.c_str(), o.priority);
  }
  return kOk;
}

struct StartOptions {
  std::string flow;
  std::string input = "{}";
  std::optional<std::string> run_id, idempotency_key, timeout;
  std::optional<int> priority;
  bool wait = false;
};

// One line of live progress: steps done, and the progress of started map steps.
std::string progress_line(const RunState& run) {
  int done = 0;
  std::string maps;
  for (const StepState& s : run.steps) {
    if (s.status == StepStatus::kCompleted || s.status == StepStatus::kSkipped) ++done;
    if (s.status == StepStatus::kStarted && s.initial_tasks.value_or(0) > 1) {
      absl::StrAppend(
          &maps, "  ", s.step_slug, " ",
          progress_bar(*s.initial_tasks - s.remaining_tasks.value_or(0), *s.initial_tasks, 10));
    }
  }
  return absl::StrCat("run ", run.run_id, ": ", done, "/", run.steps.size(), " steps done", maps);
}

// An error while following a run: the run was started, so the message names it.
absl::Status waiting_error(const std::string& run_id, const absl::Status& error) {
  return absl::Status(
      error.code(),
      absl::StrCat("run ", run_id, " was started, but waiting for it failed: ", error.message()));
}

int start(const Globals& g, const StartOptions& o) {
  absl::StatusOr<Client> client = connect_client(g);
  if (!client.ok()) return fail(client.status());
  absl::StatusOr<RunState> run = absl::UnknownError("pgflow: the start did not run");
  std::string run_id;
  bool created = true;
  // The start and its priority in one transaction: the run's first tasks are admitted in its
  // order. (A key's earlier run keeps its own priority.)
  absl::Status started = client->in_transaction([&](Transaction& tx) -> absl::Status {
    if (o.idempotency_key) {
      absl::StatusOr<IdempotentStart> keyed =
          tx.start_run_idempotent(o.flow, nlohmann::json::parse(o.input), *o.idempotency_key);
      if (!keyed.ok()) return keyed.status();
      created = keyed->created;
      run_id = keyed->run_id;
    } else {
      run = tx.start_flow(o.flow, nlohmann::json::parse(o.input), o.run_id);
      if (!run.ok()) return run.status();
      run_id = run->run_id;
    }
    if (o.priority && created) return tx.set_run_priority(run_id, *o.priority);
    return absl::OkStatus();
  });
  if (!started.ok()) return fail(started);
  // The key's run (this start's, or an earlier one's), read back for what follows.
  if (o.idempotency_key) run = client->get_run(run_id);
  if (!run.ok()) return fail(run.status());
  if (!created && !g.json) {
    // (stderr: stdout keeps the shape a start prints; --json says it in "created")
    std::fprintf(stderr,
                 "pgflow: the idempotency key already started run %s (%s); not started again%s\n",
                 run->run_id.c_str(), std::string(to_string(run->status)).c_str(),
                 o.priority ? " (its priority is unchanged: pgflow run priority sets it)" : "");
  }
  // What --json prints of a run that has not ended (or whose steps cannot be read).
  auto run_summary = [&] {
    nlohmann::json out = {
        {"run_id", run->run_id}, {"flow_slug", run->flow_slug}, {"status", to_string(run->status)}};
    if (o.idempotency_key) out["created"] = created;
    return out;
  };
  if (!o.wait) {
    if (g.json) {
      print_json(run_summary());
    } else if (created) {
      std::printf("run %s started (flow %s)\n", run->run_id.c_str(), run->flow_slug.c_str());
    } else {
      std::printf("run %s (flow %s)\n", run->run_id.c_str(), run->flow_slug.c_str());
    }
    return kOk;
  }
  // Live progress goes to stderr, and only when it is a terminal; stdout gets the result.
  const bool live = !g.json && is_terminal(2);
  const absl::Time deadline =
      o.timeout ? absl::Now() + *parse_duration(*o.timeout) : absl::InfiniteFuture();
  // Live and poll-only: this loop re-reads the run itself, as wait_for_run would, redrawing
  // each time (wait_for_run would start its back-off again for every one-second slice: six
  // reads a second for as long as the run takes).
  std::chrono::milliseconds reread = internal::kFirstReread;
  while (run->status == RunStatus::kStarted) {
    if (live) std::fprintf(stderr, "\r\033[K%s", progress_line(*run).c_str());
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) break;
    if (live && g.poll_only) {
      absl::SleepFor(std::min(left, absl::FromChrono(reread)));
      reread = internal::next_reread(reread);
      absl::StatusOr<RunState> now = client->get_run(run->run_id);
      if (!now.ok()) return fail(waiting_error(run->run_id, now.status()));
      run = std::move(now);
      continue;
    }
    const absl::Duration slice = std::min(left, live ? absl::Seconds(1) : absl::Minutes(1));
    absl::StatusOr<RunState> next = client->wait_for_run(
        run->run_id,
        std::chrono::milliseconds(std::max<int64_t>(1, absl::ToInt64Milliseconds(slice))));
    if (next.ok()) {
      run = std::move(next);
    } else if (next.status().code() != absl::StatusCode::kDeadlineExceeded) {
      return fail(waiting_error(run->run_id, next.status()));
    } else if (live) {
      absl::StatusOr<RunState> now = client->get_run(run->run_id);
      if (now.ok()) run = std::move(now);
    }
  }
  if (live) std::fprintf(stderr, "\r\033[K");
  if (run->status == RunStatus::kStarted) {
    std::fprintf(stderr, "pgflow: run %s is still running after %s (pgflow run show %s)\n",
                 run->run_id.c_str(), o.timeout->c_str(), run->run_id.c_str());
    if (g.json) print_json(run_summary());
    return kStillRunning;
  }
  absl::StatusOr<nlohmann::json> shown = read_run(g, run->run_id);
  if (!shown.ok()) {
    // The run ended: its outcome (and the exit status) is known without the step table, which
    // needs more than pgflow_starter's rights (or a read that failed).
    const bool denied = shown.status().code() == absl::StatusCode::kPermissionDenied;
    const std::string why =
        denied ? "the step table needs read access to pgflow's tables"
               : absl::StrCat("the step table could not be read: ", shown.status().message());
    shown = nlohmann::json{{"run_id", run->run_id},
                           {"flow_slug", run->flow_slug},
                           {"status", to_string(run->status)},
                           {"cancelled", run->cancelled()},
                           {"output", run->output.value_or(nullptr)},
                           {"steps_unavailable", why}};
    if (g.json && !denied) {
      std::fprintf(stderr, "pgflow: %s\n", internal::escaped(why).c_str());
    }
    if (!g.json) {
      std::printf("run %s  flow %s  %s%s\n", run->run_id.c_str(), run->flow_slug.c_str(),
                  std::string(to_string(run->status)).c_str(),
                  run->cancelled() ? " (cancelled)" : "");
      if (run->output) std::printf("output: %s\n", json_text(*run->output).c_str());
      std::printf("(%s: pgflow run show %s)\n", internal::escaped(why).c_str(),
                  run->run_id.c_str());
    }
  } else if (!g.json) {
    print_run(*shown);
  }
  if (g.json) {
    if (o.idempotency_key) (*shown)["created"] = created;
    print_json(*shown);
  }
  if (run->status == RunStatus::kCompleted) return kOk;
  return run->cancelled() ? kCancelled : kBadOutcome;
}

}  // namespace

void add_run_commands(CommandSet& commands) {
  CLI::App& app = commands.app();
  auto runs_options = std::make_shared<RunsOptions>();
  CLI::App* runs =
      commands.add(&app, "runs", "recent runs, newest first",
                   [runs_options](const Globals& g) { return list_runs(g, *runs_options); });
  runs->add_option("--flow", runs_options->flow,
                   "only runs of this flow (a slug, or an alias: all its versions)")
      ->check(slug_check());
  runs->add_option("--status", runs_options->status,
                   "only runs in this state (failed includes cancelled)")
      ->check(CLI::IsMember({"started", "completed", "failed", "cancelled"}));
  runs->add_option("--since", runs_options->since,
                   "only runs started since: a duration back from now (90s, 15m, 2h, 7d) or an RFC "
                   "3339 time")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            return since_time(v) ? ""
                                 : "not a duration (90s, 15m, 2h, 7d, 1w) or an RFC 3339 time: " +
                                       internal::printable(v);
          },
          "DURATION|TIME"));
  runs->add_option("--limit", runs_options->limit, "at most this many runs (default 50)")
      ->check(CLI::Range(1, 100000));

  CLI::App* run = commands.group("run", "one run: show, cancel, retry or resume it");
  auto show_id = std::make_shared<std::string>();
  commands
      .add(run, "show",
           "a run's steps: status, attempts, timings, errors; map steps with a progress bar",
           [show_id](const Globals& g) { return show_run(g, *show_id); })
      ->add_option("RUN_ID", *show_id, "the run")
      ->required()
      ->check(kUuid);

  auto control = std::make_shared<ControlOptions>();
  CLI::App* cancel_command =
      commands.add(run, "cancel",
                   "cancel a started run: it fails as cancelled, its tasks are cancelled and the "
                   "workers running them stop them",
                   [control](const Globals& g) { return cancel(g, *control); });
  cancel_command->add_option("RUN_ID", control->run_id, "the run")->required()->check(kUuid);
  cancel_command->add_option("--reason", control->reason, "why (kept as the run's cancel_reason)");

  CLI::App* retry_command =
      commands.add(run, "retry",
                   "start a new run of a failed or cancelled run's flow version with the same "
                   "input, linked to it",
                   [control](const Globals& g) { return retry(g, *control); });
  retry_command->add_option("RUN_ID", control->run_id, "the failed or cancelled run")
      ->required()
      ->check(kUuid);
  retry_command
      ->add_option("--new-run-id", control->new_run_id,
                   "the new run's id (makes the retry safe to repeat)")
      ->check(kUuid);

  commands
      .add(run, "resume",
           "continue a failed or cancelled run where it stopped: completed steps are kept, failed "
           "and cancelled "
           "tasks run again",
           [control](const Globals& g) { return resume(g, *control); })
      ->add_option("RUN_ID", control->run_id, "the failed or cancelled run")
      ->required()
      ->check(kUuid);

  CLI::App* priority_command =
      commands.add(run, "priority",
                   "set a run's priority (default 0, higher first): the order in which the "
                   "waiting tasks of flows with a concurrency limit are admitted",
                   [control](const Globals& g) { return prioritize(g, *control); });
  priority_command->add_option("RUN_ID", control->run_id, "the run")->required()->check(kUuid);
  priority_command->add_option("PRIORITY", control->priority, "any integer")->required();

  auto signal_options = std::make_shared<SignalOptions>();
  CLI::App* signal_command = commands.add(
      run, "signal",
      "send a signal to a wait step of a run (docs/waiting.md): its payload becomes the step's "
      "output; a resend with the same SIGNAL_ID changes nothing",
      [signal_options](const Globals& g) { return signal_step(g, *signal_options); });
  signal_command->add_option("RUN_ID", signal_options->run_id, "the run")->required()->check(kUuid);
  signal_command->add_option("STEP", signal_options->step, "the wait step's slug")
      ->required()
      ->check(slug_check());
  signal_command
      ->add_option("SIGNAL_ID", signal_options->signal_id,
                   "your id for this signal (1 to 255 characters, e.g. a webhook delivery id): a "
                   "resend is a duplicate")
      ->required()
      ->check(key_check());
  signal_command
      ->add_option("--payload", signal_options->payload, "the payload, JSON (default null)")
      ->check(json_check());
  signal_command
      ->add_option("--task-index", signal_options->task_index,
                   "the task of a map wait step (default 0)")
      ->check(CLI::NonNegativeNumber);

  auto start_options = std::make_shared<StartOptions>();
  CLI::App* start_command = commands.add(
      &app, "start", "start a run of FLOW's active version; --wait follows it to the end",
      [start_options](const Globals& g) { return start(g, *start_options); });
  start_command->add_option("FLOW", start_options->flow, "the flow alias (a plain flow's slug)")
      ->required()
      ->check(slug_check());
  start_command->add_option("--input", start_options->input, "the run's input, JSON (default {})")
      ->check(json_check());
  start_command
      ->add_option("--run-id", start_options->run_id,
                   "the new run's id (makes the start safe to repeat)")
      ->check(kUuid);
  start_command
      ->add_option("--idempotency-key", start_options->idempotency_key,
                   "start at most one run of FLOW's alias for KEY (1 to 255 characters): a "
                   "repeat finds that run, says so on stderr and does not start another")
      ->check(key_check())
      ->excludes("--run-id");
  start_command->add_option("--priority", start_options->priority,
                            "the run's priority (default 0, higher first), set in the start's "
                            "transaction: the order in which waiting tasks of flows with a "
                            "concurrency limit are admitted");
  start_command->add_flag(
      "--wait", start_options->wait,
      "wait until the run ends, with live progress on a terminal; exit 0 completed, 3 failed, "
      "4 cancelled");
  start_command
      ->add_option("--timeout", start_options->timeout,
                   "with --wait: stop waiting after this long (exit 5)")
      ->check(duration_check("30s, 5m, 1h"))
      ->needs("--wait");
}

}  // namespace pgflow::cli
