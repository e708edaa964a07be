#include "load/support.h"

#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "internal/strings.h"
#include "pgflow/log.h"

namespace pgflow::bench {

using internal::absl_view;

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}
double millis_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

void progress(const std::string& line) {
  std::fprintf(stderr, "pgflow_bench: %s\n", line.c_str());
  std::fflush(stderr);
}

// ---- flags ----

const std::vector<Flags::Spec>& Flags::specs() {
  static const std::vector<Spec> kSpecs = {
      {"only", "abcdefghiuksylw",
       "sections to run, e.g. --only=ab (a raw PGMQ, b backlog, c producers, "
       "d DAG, e latency, f map scaling, g idle, h step queues, i cancellation, "
       "u upstream's protocol, k claims vs raw reads, s starts vs raw sends, y history growth, "
       "l concurrency limits, w waits and signals; p a fleet behind PgBouncer, not by default)"},
      {"wait_runs", "10000", "w: runs waiting for a signal at once"},
      {"scale", "1",
       "multiplies every run/task count (e.g. 0.2 for a quick run, 5 for a long one)"},
      {"concurrency", "10", "worker max_concurrent"},
      {"batch", "10", "worker batch_size, and the raw cycle's send/read/archive batch"},
      {"raw_conns", "1,2,10",
       "connection counts of the raw PGMQ cycle; the best rate is the reference"},
      {"raw_seconds", "3", "measured seconds per raw PGMQ configuration"},
      {"backlog", "3000", "b: runs pre-filled before the worker starts (per report batch size)"},
      {"limit_rounds", "3", "l: alternating rounds of the backlog drain without and with a limit"},
      {"limit_tasks", "2000", "l: tasks drained by three workers under a step limit of 5"},
      {"priority_backlog", "2000", "l: priority-0 runs waiting when the priority-10 run starts"},
      {"noisy_backlog", "5000",
       "l: the noisy tenant's queued runs beside the quiet tenant's probes"},
      {"e2e_runs", "3000", "c: runs started by the producers"},
      {"producers", "2", "c: producer threads (each start_flow is its own transaction)"},
      {"dag_runs", "30", "d: runs of the 5-step DAG"},
      {"dag_map", "100", "d: elements of the DAG's map step"},
      {"latency_runs", "200", "e: runs measured (after 10 warm-up runs)"},
      {"cancel_runs", "50", "i: runs cancelled while their handlers run (after 3 warm-up runs)"},
      {"map_small", "1000", "f: elements of the small map"},
      {"map_large", "10000", "f: elements of the large map"},
      {"map_small_repeats", "3", "f: small-map runs (the median is used)"},
      {"idle_seconds", "5", "g: idle seconds measured"},
      {"fair_map", "10000", "h: elements of the map that fills the backlog"},
      {"fair_probes", "20", "h: probe runs per measurement (100 ms apart)"},
      {"fair_work_ms", "20",
       "h: handler time of each map element (0: the database is the only work)"},
      {"upstream_runs", "1000",
       "u: runs per system of each row (start_flow with 1 and 2 clients, drain, mixed), "
       "in 4 alternating rounds"},
      {"upstream_seconds", "15", "u: the sustained 2-client start_flow run per system (u2s)"},
      {"upstream_sql", "",
       "u: upstream pgflow's SQL migrations to compare with (a .sql file or a directory); "
       "empty: bench/upstream/fetch-core.sh's cache of 0.14.1 if present; none: ours only"},
      {"upstream_realtime", "notify",
       "u: upstream's realtime.send stand-in: notify (pg_notify of ids, like ours' events) or "
       "none"},
      {"sustained_seconds", "60", "s: seconds of the sustained start run (2 threads)"},
      {"claims", "500", "k: claims of 10 messages measured (and as many raw read + set_vt pairs)"},
      {"claim_backlog", "2000", "k: runs still queued after the last claim"},
      {"history_runs", "1000000",
       "y: finished runs (with their tasks and archived messages) filled in for the second "
       "measurement"},
      {"fleet_tasks", "20000", "p: tasks each fleet drain takes from its backlog"},
      {"fleet_rounds", "2", "p: alternating rounds of direct, pooled poll-only, pooled + LISTEN"},
      {"fleet_probes", "40", "p: runs whose commit -> handler latency is measured per mode"},
      {"pooler_url", "",
       "p: a transaction pooler in front of DATABASE_URL's server (empty: scripts/pgpooler in "
       "front of the throwaway cluster)"},
      {"timeout_seconds", "180", "give up on one measurement after this long"},
      {"cluster_dir", PGFLOW_BENCH_CLUSTER_DIR,
       "where the throwaway cluster lives when DATABASE_URL is not set"},
      {"keep_cluster", "0", "1: leave the throwaway cluster running at the end (data kept)"},
  };
  return kSpecs;
}

Flags Flags::parse(int argc, char** argv) {
  Flags flags;
  for (const Spec& s : specs()) flags.values_[s.name] = s.default_value;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      flags.help_ = true;
      continue;
    }
    if (arg.substr(0, 2) != "--" || arg.find('=') == std::string_view::npos) {
      throw BenchError(
          absl::StrCat("bad argument \"", absl_view(arg), "\": use --key=value (see --help)"));
    }
    std::string key(arg.substr(2, arg.find('=') - 2));
    if (!flags.values_.contains(key)) {
      throw BenchError(absl::StrCat("unknown flag --", key, " (see --help)"));
    }
    flags.values_[key] = std::string(arg.substr(arg.find('=') + 1));
  }
  return flags;
}

void Flags::print_help() {
  std::printf(
      "pgflow_bench: end-to-end load benchmarks of pgflow against one PostgreSQL server.\n"
      "Uses DATABASE_URL when set, otherwise a throwaway cluster (scripts/pgcluster).\n\n"
      "Flags (--key=value):\n");
  for (const Spec& s : specs()) {
    std::printf("  --%-18s %s (default: %s)\n", s.name.c_str(), s.help.c_str(),
                s.default_value.c_str());
  }
}

std::string Flags::text(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw BenchError("internal: no flag " + name);
  return it->second;
}

std::int64_t Flags::integer(const std::string& name) const {
  std::int64_t v = 0;
  if (!absl::SimpleAtoi(text(name), &v)) throw BenchError("--" + name + " must be an integer");
  return v;
}

double Flags::number(const std::string& name) const {
  double v = 0;
  if (!absl::SimpleAtod(text(name), &v)) throw BenchError("--" + name + " must be a number");
  return v;
}

std::int64_t Flags::scaled(const std::string& name, std::int64_t minimum) const {
  return std::max<std::int64_t>(minimum,
                                std::llround(static_cast<double>(integer(name)) * number("scale")));
}

bool Flags::runs(char id) const { return text("only").find(id) != std::string::npos; }

// ---- database ----

Db Db::open(const std::string& url, std::string_view application_name) {
  absl::StatusOr<pg::Connection> conn = pg::Connection::open(url, application_name);
  if (!conn.ok()) throw BenchError(absl::StrCat("connecting: ", conn.status().message()));
  return Db(std::move(*conn));
}

pg::Result Db::exec(std::string_view sql, const std::vector<pg::Param>& params) {
  absl::StatusOr<pg::Result> r = conn_.exec(sql, params);
  if (!r.ok()) {
    std::string_view first = sql.substr(0, sql.find('\n', 1));
    throw BenchError(absl::StrCat("SQL failed (", absl_view(first), "): ", r.status().message()));
  }
  return std::move(*r);
}

std::string Db::scalar(std::string_view sql, const std::vector<pg::Param>& params) {
  pg::Result r = exec(sql, params);
  if (r.rows() == 0) return "";
  return std::string(r.scalar());
}

std::int64_t Db::integer(std::string_view sql, const std::vector<pg::Param>& params) {
  std::int64_t v = 0;
  std::string s = scalar(sql, params);
  if (!absl::SimpleAtoi(s, &v))
    throw BenchError(absl::StrCat("expected an integer from SQL, got \"", s, "\""));
  return v;
}

std::string unique_slug(std::string_view base) {
  static std::atomic<int> counter{0};
  return absl::StrCat(absl_view(base), "_p", getpid(), "_", ++counter);
}

void compile_flow(Db& db, const FlowDefinition& flow) {
  std::string out = db.scalar(
      "select pgflow.ensure_flow_compiled($1, $2::jsonb, pgflow.worker_protocol(), $3, null, "
      "null, $4::jsonb)::text",
      {flow.slug, shape_of(flow).dump(), std::string(to_string(flow.queue_mode)),
       flow_control_of(flow).dump()});
  if (out.find("\"mismatch\"") != std::string::npos) {
    throw BenchError("flow " + flow.slug + " exists with another shape: " + out);
  }
}

namespace {

// Starts `runs` runs of a flow in chunks, each with the input `input_sql` computes from the row
// number i ($3 is `arg`).
void prefill_with(Db& db, const std::string& flow_slug, std::int64_t runs,
                  const std::string& input_sql, const std::string& arg) {
  constexpr std::int64_t kChunk = 500;
  for (std::int64_t done = 0; done < runs; done += kChunk) {
    std::int64_t n = std::min(kChunk, runs - done);
    // In the select list, so that it runs once per row (a LATERAL call that does not use the
    // row would run once).
    db.exec("select count(*) from (select pgflow.start_flow($1, " + input_sql +
                ") from generate_series(1, $2::int) i) s",
            {flow_slug, std::to_string(n), arg});
  }
}

}  // namespace

void prefill_runs(Db& db, const std::string& flow_slug, std::int64_t runs,
                  const std::string& input_json) {
  prefill_with(db, flow_slug, runs, "$3::jsonb", input_json);
}

void prefill_tenant_runs(Db& db, const std::string& flow_slug, std::int64_t runs, int tenants) {
  prefill_with(db, flow_slug, runs, "jsonb_build_object('tenant', 't' || (i % $3::int))",
               std::to_string(tenants));
}

void drop_flow(Db& db, const std::string& flow_slug) {
  db.exec("select pgflow.delete_flow_and_data($1)", {flow_slug});
  db.exec("delete from pgflow.workers where queue_name = lower($1)", {flow_slug});
  db.exec("delete from pgflow.worker_functions where function_name = $1 || '-worker'", {flow_slug});
}

void vacuum_run_tables(Db& db) {
  db.exec("vacuum analyze pgflow.runs, pgflow.step_states, pgflow.step_tasks, pgflow.workers");
}

// ---- TaskCounter ----

void TaskCounter::reset(std::int64_t target) {
  std::lock_guard<std::mutex> lock(mu_);
  target_ = target;
  done_at_.reset();
  completed_ = 0;
  claim_calls_ = 0;
  looks_ = 0;
  nonempty_claims_ = 0;
  claimed_ = 0;
  claim_micros_ = 0;
}

std::function<void(const WorkerMetric&)> TaskCounter::callback() {
  return [this](const WorkerMetric& m) { on_metric(m); };
}

void TaskCounter::on_metric(const WorkerMetric& m) {
  switch (m.kind) {
    case WorkerMetric::Kind::kCompleted: {
      const std::int64_t n = completed_.fetch_add(static_cast<std::int64_t>(m.value)) +
                             static_cast<std::int64_t>(m.value);
      std::lock_guard<std::mutex> lock(mu_);
      if (!done_at_ && target_ > 0 && n >= target_) {
        done_at_ = Clock::now();
        cv_.notify_all();
      }
      break;
    }
    case WorkerMetric::Kind::kClaimed:
      ++nonempty_claims_;
      claimed_ += static_cast<std::int64_t>(m.value);
      break;
    case WorkerMetric::Kind::kClaimLatency:
      ++claim_calls_;
      claim_micros_ += static_cast<std::int64_t>(m.value * 1000);
      break;
    case WorkerMetric::Kind::kLooked:
      ++looks_;
      break;
    default:
      break;
  }
}

std::optional<Clock::time_point> TaskCounter::wait(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [this] { return done_at_.has_value(); });
  return done_at_;
}

double TaskCounter::mean_claim_size() const {
  const std::int64_t n = nonempty_claims_.load();
  return n == 0 ? 0 : static_cast<double>(claimed_.load()) / static_cast<double>(n);
}

double TaskCounter::mean_claim_ms() const {
  const std::int64_t n = claim_calls_.load();
  return n == 0 ? 0 : static_cast<double>(claim_micros_.load()) / 1000.0 / static_cast<double>(n);
}

namespace {
std::atomic<std::int64_t> problems{0};
}  // namespace

std::int64_t worker_problems() { return problems.load(); }

WorkerConfig worker_config(const BenchContext& ctx, int report_batch_size, TaskCounter* counter) {
  WorkerConfig c;
  c.connection_string = ctx.url;
  c.max_concurrent = ctx.concurrency;
  c.batch_size = ctx.batch;
  c.report_batch_size = report_batch_size;
  c.log_sink = [sink = stderr_log_sink()](const LogRecord& r) {
    if (r.level <= LogLevel::kWarn) ++problems;
    sink(r);
  };
  c.log_level = LogLevel::kWarn;
  if (counter) c.metrics = counter->callback();
  return c;
}

EdgeWorker start_worker(const FlowDefinition& flow, WorkerConfig config) {
  absl::StatusOr<EdgeWorker> w = EdgeWorker::start(flow, std::move(config));
  if (!w.ok())
    throw BenchError(
        absl::StrCat("starting the worker for ", flow.slug, ": ", w.status().message()));
  return std::move(*w);
}

// ---- CPU accounting ----

namespace {

// The fields of /proc/<pid>/stat after "pid (comm) ", i.e. starting with field 3 (state).
std::optional<std::vector<std::string>> proc_stat(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/stat");
  std::string stat;
  if (!in || !std::getline(in, stat)) return std::nullopt;
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 > stat.size()) return std::nullopt;
  std::istringstream rest(stat.substr(paren + 2));
  std::vector<std::string> fields;
  for (std::string f; rest >> f;) fields.push_back(f);
  if (fields.size() < 15) return std::nullopt;
  return fields;
}

double ticks(const std::string& s) {
  return std::stod(s) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// utime, stime, cutime, cstime are fields 14-17, i.e. [11..14] here; ppid is field 4, [1].
double cpu_of(const std::vector<std::string>& f, bool children) {
  return ticks(f[11]) + ticks(f[12]) + (children ? ticks(f[13]) + ticks(f[14]) : 0.0);
}

}  // namespace

std::optional<double> cpu_seconds_of_pid(int pid, bool children) {
  std::optional<std::vector<std::string>> f = proc_stat(std::to_string(pid));
  if (!f) return std::nullopt;
  return cpu_of(*f, children);
}

CpuMeter::CpuMeter(Db& db) {
  const std::string backend = db.scalar("select pg_backend_pid()::text");
  std::optional<std::vector<std::string>> f = proc_stat(backend);
  if (!f) return;
  int ppid = 0;
  if (absl::SimpleAtoi((*f)[1], &ppid) && ppid > 1) postmaster_ = ppid;
}

CpuSample CpuMeter::sample() const {
  CpuSample out;
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  out.process = static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
                static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
  if (!postmaster_) return out;
  // Exited children (e.g. closed backends, autovacuum workers) count in the postmaster's
  // cutime/cstime; live ones are added one by one.
  std::optional<double> total = cpu_seconds_of_pid(*postmaster_, /*children=*/true);
  if (!total) return out;
  const std::string parent = std::to_string(*postmaster_);
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::optional<std::vector<std::string>> f = proc_stat(name);
    if (f && (*f)[1] == parent) *total += cpu_of(*f, /*children=*/true);
  }
  out.server = total;
  return out;
}

std::string backend_cpu_by_connection(Db& db, double seconds) {
  pg::Result r = db.exec(
      "select pid, application_name from pg_stat_activity "
      "where application_name like 'pgflow-worker-%' or application_name = 'pgflow-client' "
      "order by application_name, pid");
  std::map<std::string, double> by_name;
  for (int i = 0; i < r.rows(); ++i) {
    int pid = 0;
    if (!absl::SimpleAtoi(absl_view(r.text(i, 0)), &pid)) continue;
    std::optional<double> cpu = cpu_seconds_of_pid(pid);
    if (!cpu) return "";
    by_name[std::string(r.text(i, 1))] += *cpu;
  }
  std::string out;
  for (const auto& [name, cpu] : by_name) {
    absl::StrAppend(&out, out.empty() ? "" : ", ", name, " ",
                    absl::StrFormat("%.0f%%", 100 * cpu / seconds));
  }
  return out.empty() ? "" : "backend CPU (share of one core): " + out;
}

std::string CpuMeter::per_task(const CpuSample& from, const CpuSample& to, std::int64_t tasks,
                               double seconds, std::string_view unit, std::string_view process) {
  const double n = static_cast<double>(std::max<std::int64_t>(tasks, 1));
  const double used = to.process - from.process;
  std::string server = "n/a (server not local)";
  std::string server_util;
  if (from.server && to.server) {
    const double s = *to.server - *from.server;
    server = absl::StrFormat("%.0f us", s * 1e6 / n);
    server_util = absl::StrFormat("server %.0f%% of a core, ", 100 * s / seconds);
  }
  return absl::StrFormat("CPU per %s: PostgreSQL %s, %s %.0f us (%s%s %.0f%%)", absl_view(unit),
                         server, absl_view(process), used * 1e6 / n, server_util,
                         absl_view(process), 100 * used / seconds);
}

std::optional<double> CpuMeter::server_us(const CpuSample& from, const CpuSample& to,
                                          std::int64_t tasks) {
  if (!from.server || !to.server) return std::nullopt;
  return (*to.server - *from.server) * 1e6 / static_cast<double>(std::max<std::int64_t>(tasks, 1));
}

void CpuTally::add(double window_seconds, std::int64_t window_units, const CpuSample& from,
                   const CpuSample& to) {
  seconds += window_seconds;
  units += window_units;
  used.process += to.process - from.process;
  if (used.server && from.server && to.server) {
    *used.server += *to.server - *from.server;
  } else {
    used.server.reset();
  }
}

std::string CpuTally::per_unit(std::string_view unit, std::string_view process) const {
  return CpuMeter::per_task({.process = 0, .server = 0.0}, used, units, seconds, unit, process);
}

std::optional<double> CpuTally::server_us() const {
  return CpuMeter::server_us({.process = 0, .server = 0.0}, used, units);
}

// ---- timed loops ----

std::vector<LoopMark> run_loop(const CpuMeter& meter, int threads, double seconds,
                               double mark_every, const LoopBody& body) {
  std::atomic<bool> stop{false};
  std::atomic<std::int64_t> done{0};
  std::mutex error_mu;
  std::string error;
  std::vector<LoopMark> marks;
  {
    std::vector<std::jthread> running;
    for (int t = 0; t < threads; ++t) {
      running.emplace_back([&, t] {
        try {
          body(t, stop, done);
        } catch (const std::exception& e) {
          std::lock_guard<std::mutex> lock(error_mu);
          if (error.empty()) error = e.what();
          stop = true;
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // warm-up
    auto mark = [&] { marks.push_back({Clock::now(), done.load(), meter.sample()}); };
    mark();
    const auto start = marks.front().at;
    const int intervals = std::max(1, static_cast<int>(std::lround(seconds / mark_every)));
    for (int i = 1; i <= intervals && !stop.load(); ++i) {
      std::this_thread::sleep_until(start +
                                    std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(seconds * i / intervals)));
      mark();
    }
    stop = true;
  }
  if (!error.empty()) throw BenchError(error);
  return marks;
}

double units_per_second(const LoopMark& from, const LoopMark& to) {
  return static_cast<double>(to.done - from.done) / seconds_between(from.at, to.at);
}

// ---- statistics ----

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  // Nearest rank: the smallest value with at least p% of the values at or below it.
  auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
  rank = std::clamp<size_t>(rank, 1, values.size());
  return values[rank - 1];
}

double median(std::vector<double> values) { return percentile(std::move(values), 50); }

// ---- report ----

void Report::add(ResultRow row) { rows_.push_back(std::move(row)); }
void Report::note(std::string line) { notes_.push_back(std::move(line)); }
void Report::target(TargetRow row) { targets_.push_back(std::move(row)); }
void Report::verdict(Verdict v) { verdicts_.push_back(std::move(v)); }

Verdict multiple_verdict(std::string what, double measured, double reference, std::string_view unit,
                         double bound, bool at_most) {
  const double multiple = reference > 0 ? measured / reference : 0;
  return {.what = std::move(what),
          .met = reference > 0 && (at_most ? multiple <= bound : multiple >= bound),
          .figure = absl::StrFormat("%.0f vs %.0f %s = %.2fx", measured, reference, absl_view(unit),
                                    multiple),
          .target = absl::StrFormat("%s %.3gx", at_most ? "<=" : ">=", bound)};
}

const ResultRow* Report::find(std::string_view id) const {
  for (const ResultRow& r : rows_) {
    if (r.id == id) return &r;
  }
  return nullptr;
}

void Report::print(double raw_rate) const {
  std::printf("\n== results ==\n");
  std::printf("%-4s %-62s %12s %-9s %s\n", "id", "measurement", "value", "unit", "vs raw PGMQ");
  for (const ResultRow& r : rows_) {
    if (r.id.empty()) {  // a further note of the row above
      std::printf("%-4s   %s\n", "", r.note.c_str());
      continue;
    }
    std::string ratio;
    if (r.throughput && raw_rate > 0) ratio = absl::StrFormat("%.2f", r.value / raw_rate);
    std::string value =
        r.value >= 100 ? absl::StrFormat("%.0f", r.value) : absl::StrFormat("%.2f", r.value);
    std::printf("%-4s %-62s %12s %-9s %s\n", r.id.c_str(), r.name.c_str(), value.c_str(),
                r.unit.c_str(), ratio.c_str());
    if (!r.note.empty()) std::printf("%-4s   %s\n", "", r.note.c_str());
  }
  if (!notes_.empty()) {
    std::printf("\n== notes ==\n");
    for (const std::string& n : notes_) std::printf("- %s\n", n.c_str());
  }
  std::printf("\n== architecture section 6 targets ==\n");
  for (const TargetRow& t : targets_) {
    const char* verdict = !t.met ? "[not measured]" : *t.met ? "[MET]" : "[NOT MET]";
    std::printf("%-15s %s\n%-15s   %s\n", verdict, t.target.c_str(), "", t.detail.c_str());
  }
  if (!verdicts_.empty()) std::printf("\n== verdicts (hot-path targets, issue 30) ==\n");
  for (const bool primary : {true, false}) {
    for (const Verdict& v : verdicts_) {
      if (v.primary != primary) continue;
      std::printf("%-10s %s %s: %s (target %s)\n", v.met ? "[MET]" : "[NOT MET]",
                  primary ? "primary  " : "secondary", v.what.c_str(), v.figure.c_str(),
                  v.target.c_str());
    }
  }
  std::fflush(stdout);
}

// ---- the machine ----

namespace {

std::string first_match(const std::string& path, const std::string& prefix) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) == 0) {
      auto colon = line.find(':');
      std::string v = colon == std::string::npos ? line : line.substr(colon + 1);
      v.erase(0, v.find_first_not_of(" \t"));
      return v;
    }
  }
  return "?";
}

}  // namespace

std::vector<std::string> describe_machine(Db& db) {
  std::vector<std::string> lines;
  utsname u{};
  uname(&u);
  std::string mem = first_match("/proc/meminfo", "MemTotal");
  double mem_gib = 0;
  if (std::int64_t kb = 0; absl::SimpleAtoi(mem.substr(0, mem.find(' ')), &kb)) {
    mem_gib = static_cast<double>(kb) / 1024.0 / 1024.0;
  }
  lines.push_back(
      absl::StrFormat("cpu: %u logical CPUs (nproc %ld), %s", std::thread::hardware_concurrency(),
                      sysconf(_SC_NPROCESSORS_ONLN), first_match("/proc/cpuinfo", "model name")));
  lines.push_back(absl::StrFormat("ram: %.1f GiB; kernel %s %s", mem_gib, u.sysname, u.release));
  std::string load = "?";
  if (std::ifstream in("/proc/loadavg"); in) std::getline(in, load);
  lines.push_back("load average at start: " + load);
  lines.push_back("postgresql: " + db.scalar("select version()"));
  pg::Result s = db.exec(
      "select n, current_setting(n) from unnest(array['shared_buffers', 'synchronous_commit', "
      "'fsync', "
      "'full_page_writes', 'wal_sync_method', 'max_connections', 'wal_level', 'work_mem', "
      "'max_wal_size', 'checkpoint_timeout', 'commit_delay', 'autovacuum']) n");
  std::string settings;
  for (int i = 0; i < s.rows(); ++i) {
    absl::StrAppend(&settings, i ? ", " : "", absl_view(s.text(i, 0)), "=",
                    absl_view(s.text(i, 1)));
  }
  lines.push_back("settings: " + settings);
  lines.push_back("pgmq: " + db.scalar("select coalesce((select 'extension ' || extversion from "
                                       "pg_extension where extname = 'pgmq'), "
                                       "'bundled pure-SQL layer (sql/pgmq)')"));
  return lines;
}

// ---- shell ----

// Runs a shell command and returns its stdout (trimmed); throws on a non-zero exit.
std::string run_command(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) throw BenchError("cannot run " + command);
  std::string out;
  std::array<char, 512> buf{};
  while (size_t n = fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  const int rc = pclose(pipe);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  if (rc != 0) throw BenchError(absl::StrCat("`", command, "` failed (status ", rc, ")"));
  return out;
}

}  // namespace pgflow::bench
