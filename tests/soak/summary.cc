#include "summary.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace pgflow::soak {

namespace {

std::string mib(const std::optional<std::int64_t>& kib) {
  return kib ? absl::StrFormat("%.1f MiB", static_cast<double>(*kib) / 1024.0) : "n/a";
}

}  // namespace

std::vector<std::string> failures(const SoakReport& r) {
  std::vector<std::string> why;
  const Verification& v = r.verification;
  if (v.lost() > 0)
    why.push_back(absl::StrCat(v.lost(), " runs lost (not completed with the right output)"));
  if (v.unknown > 0)
    why.push_back(
        absl::StrCat(v.unknown, " soak runs in the database that the producer never started"));
  if (v.completed_without_execution > 0) {
    why.push_back(absl::StrCat(v.completed_without_execution,
                               " tasks completed without a handler execution"));
  }
  if (v.executions_beyond_attempts > 0) {
    why.push_back(absl::StrCat(v.executions_beyond_attempts,
                               " handler executions beyond the tasks' attempts"));
  }
  if (!r.chaos.unexpected_exits.empty()) {
    why.push_back(absl::StrCat(r.chaos.unexpected_exits.size(), " workers exited by themselves"));
  }
  if (!r.stop_problems.empty())
    why.push_back(absl::StrCat(r.stop_problems.size(), " workers did not stop cleanly"));
  if (r.producer.started == 0) why.push_back("no run was started");
  if (!r.stalled_under_live_workers.empty()) {
    why.push_back(absl::StrCat(r.stalled_under_live_workers.size(),
                               " tasks of live workers waited for stall recovery"));
  }
  if (r.deadlocks > 0)
    why.push_back(absl::StrCat(r.deadlocks, " deadlocks (40P01) in the server log"));
  return why;
}

void print_summary(const SoakReport& r, std::FILE* out) {
  const Verification& v = r.verification;
  const DuplicateStats& d = r.duplicates;
  const std::vector<std::string> why = failures(r);
  std::fprintf(out, "\npgflow soak: %s\n", why.empty() ? "PASSED" : "FAILED");
  for (const std::string& w : why) std::fprintf(out, "  FAILED: %s\n", w.c_str());
  std::fprintf(out, "  settings    %s\n", r.settings.c_str());
  std::fprintf(out,
               "  faults      %d worker kills, %d PostgreSQL restarts (immediate; longest %.1f s), "
               "%d proxy cuts "
               "(%d connections; %d claims lost their reply after committing), %zu worker exits "
               "by themselves\n",
               r.chaos.kills, r.chaos.restarts, r.chaos.restart_seconds_max, r.chaos.cuts,
               r.chaos.connections_cut, r.claims_cut_after_commit, r.chaos.unexpected_exits.size());
  std::vector<std::string> codes;
  for (const auto& [code, n] : r.producer.errors_by_code)
    codes.push_back(absl::StrCat(code, " ", n));
  std::fprintf(out,
               "  runs        %lld started in %.0f s (%lld start calls failed and were "
               "retried%s%s; %lld found "
               "already started; %lld abandoned)\n",
               static_cast<long long>(r.producer.started), r.soak_seconds,
               static_cast<long long>(r.producer.start_errors), codes.empty() ? "" : ": ",
               absl::StrJoin(codes, ", ").c_str(),
               static_cast<long long>(r.producer.already_existed),
               static_cast<long long>(r.producer.abandoned));
  std::fprintf(out,
               "              %lld completed with the right output; lost %lld (wrong output %lld, "
               "failed %lld, "
               "unfinished %lld, missing %lld); unknown %lld; all finished %.1f s after the faults "
               "stopped%s\n",
               static_cast<long long>(v.completed_ok), static_cast<long long>(v.lost()),
               static_cast<long long>(v.wrong_output), static_cast<long long>(v.failed),
               static_cast<long long>(v.unfinished), static_cast<long long>(v.missing),
               static_cast<long long>(v.unknown), r.drain_seconds,
               r.drained ? "" : " (drain timed out)");
  std::fprintf(out,
               "  tasks       %lld (attempts %lld, requeued by stall recovery %lld, permanently "
               "stalled %lld)\n",
               static_cast<long long>(v.tasks), static_cast<long long>(v.attempts),
               static_cast<long long>(v.requeued), static_cast<long long>(v.permanently_stalled));
  std::fprintf(
      out,
      "  executions  %lld handler starts for %lld tasks: duplicates %lld (after a kill %lld, "
      "unexplained %lld), handler errors %lld, most starts of one task %d\n",
      static_cast<long long>(d.executions), static_cast<long long>(d.tasks),
      static_cast<long long>(d.duplicates), static_cast<long long>(d.after_kill),
      static_cast<long long>(d.unexplained), static_cast<long long>(d.failed), d.max_per_task);
  std::fprintf(
      out,
      "  checks      completed without an execution %lld, executions beyond attempts %lld, "
      "workers not stopping cleanly %zu, tasks of live workers left to stall recovery %zu, "
      "deadlocks (40P01) %lld\n",
      static_cast<long long>(v.completed_without_execution),
      static_cast<long long>(v.executions_beyond_attempts), r.stop_problems.size(),
      r.stalled_under_live_workers.size(), static_cast<long long>(r.deadlocks));
  std::vector<std::string> end;
  for (const auto& kib : r.end_rss) end.push_back(mib(kib));
  std::fprintf(out,
               "  memory      witness worker (never killed) VmRSS: ready %s, warm %s, end %s; "
               "every worker at "
               "the end: %s\n",
               mib(r.witness_ready_rss).c_str(), mib(r.chaos.witness_warm_rss).c_str(),
               mib(r.witness_end_rss).c_str(), absl::StrJoin(end, ", ").c_str());
  std::fprintf(out,
               "  proxy       %lld connections accepted (%lld while PostgreSQL was down); %d "
               "worker processes "
               "replaced\n",
               static_cast<long long>(r.proxy_accepted), static_cast<long long>(r.proxy_refused),
               r.respawns);
  std::fprintf(out, "  worker logs %lld warnings, %lld errors, %lld other lines\n",
               static_cast<long long>(r.logs.warnings), static_cast<long long>(r.logs.errors),
               static_cast<long long>(r.logs.other));
  for (size_t i = 0; i < r.logs.by_message.size() && i < 12; ++i) {
    std::fprintf(out, "    %7lld  %s\n", static_cast<long long>(r.logs.by_message[i].second),
                 r.logs.by_message[i].first.c_str());
  }
  auto list = [out](const char* title, const std::vector<std::string>& lines) {
    if (lines.empty()) return;
    std::fprintf(out, "  %s:\n", title);
    for (const std::string& l : lines) std::fprintf(out, "    %s\n", l.c_str());
  };
  list("lost runs (first 20)", v.problems);
  list("unexplained duplicates (first 10)", d.unexplained_samples);
  list("execution log vs database (first 10)", v.cross_check_samples);
  list("worker exits by themselves", r.chaos.unexpected_exits);
  list("workers not stopping cleanly", r.stop_problems);
  list("tasks of live workers left to stall recovery",
       std::vector<std::string>(r.stalled_under_live_workers.begin(),
                                r.stalled_under_live_workers.end()));
}

}  // namespace pgflow::soak
