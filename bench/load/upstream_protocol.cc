// u. Upstream's protocol: our SQL API driven exactly as upstream pgflow's TypeScript worker and
// SQL client drive it (reference/sdk-upstream.md 2.4-2.6, 2.11), over plain libpq connections
// and no C++ worker: producers call pgflow.start_flow, one run per autocommit transaction, on a
// one-step flow built with create_flow / add_step; a worker loop on one connection calls
// pgmq.read_with_poll -> pgflow.start_tasks -> one pgflow.complete_task per task, each its own
// transaction.
//
// When upstream's SQL migrations are at hand (--upstream_sql=PATH, or the cache that
// bench/upstream/fetch-core.sh fills with npm), the same rows also run against upstream's schema
// in a second database of the same cluster, on the PGMQ that ours uses, ours and upstream's
// alternating round by round; every row then prints ours / upstream and a verdict. Upstream's
// SQL is read at run time only: it is never part of this repository.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "internal/status_macros.h"
#include "internal/strings.h"
#include "load/support.h"
#include "migrate/embedded_sql.h"

namespace pgflow::bench {
namespace {

namespace fs = std::filesystem;
using internal::absl_view;

// The release issue #30 compares with, and the rounds every row alternates in.
constexpr char kComparatorVersion[] = "0.14.1";
constexpr int kRounds = 4;

// The statements, as upstream's client and worker send them (named arguments included).
constexpr char kStartFlow[] = "select pgflow.start_flow(flow_slug => $1::text, input => $2::jsonb)";
constexpr char kReadWithPoll[] =
    "select * from pgmq.read_with_poll(queue_name => $1::text, vt => 5, qty => $2::int, "
    "max_poll_seconds => 2, poll_interval_ms => 100)";
constexpr char kStartTasks[] =
    "select * from pgflow.start_tasks(flow_slug => $1::text, msg_ids => $2::bigint[], "
    "worker_id => $3::uuid)";
constexpr char kCompleteTask[] =
    "select pgflow.complete_task(run_id => $1::uuid, step_slug => $2::text, "
    "task_index => $3::int, output => $4::jsonb)";
constexpr char kHeartbeat[] =
    "update pgflow.workers set last_heartbeat_at = clock_timestamp() where worker_id = $1::uuid "
    "returning (deprecated_at is not null)";
// Upstream's worker inserts its row itself. Ours refuses a row without a worker protocol (an
// upstream worker is told to upgrade) and registers the same row through register_worker.
constexpr char kRegisterUpstream[] =
    "insert into pgflow.workers (queue_name, worker_id, function_name) "
    "values ($1::text, gen_random_uuid(), $1::text || '-worker') returning worker_id";
constexpr char kRegisterOurs[] =
    "select worker_id from pgflow.register_worker(gen_random_uuid(), $1::text || '-worker', "
    "$1::text, lower($1::text), pgflow.worker_protocol())";
// What every handler returns.
constexpr char kOutput[] = "1";

// Stand-ins for the Supabase objects upstream's SQL refers to (sql-core.md 0): pg_cron's job
// tables and schedule functions (its migrations schedule jobs while installing), pg_net's
// http_post and Vault's decrypted secrets (named by ensure_workers). No job runs here and no
// request is sent. realtime.send comes from realtime_stub().
constexpr char kSupabaseStubs[] = R"sql(
create schema if not exists cron;
create schema if not exists net;
create schema if not exists vault;
create schema if not exists realtime;
create table if not exists cron.job (
  jobid bigserial primary key, jobname text unique, schedule text not null, command text not null);
create table if not exists cron.job_run_details (
  runid bigserial primary key, jobid bigint, status text, return_message text,
  start_time timestamptz, end_time timestamptz);
create or replace function cron.schedule(job_name text, schedule text, command text)
returns bigint language sql as $$
  insert into cron.job (jobname, schedule, command)
  values (schedule.job_name, schedule.schedule, schedule.command)
  on conflict (jobname) do update set schedule = excluded.schedule, command = excluded.command
  returning jobid
$$;
create or replace function cron.unschedule(job_name text) returns boolean language sql as $$
  with gone as (delete from cron.job j where j.jobname = unschedule.job_name returning 1)
  select exists (select 1 from gone)
$$;
create or replace function net.http_post(url text, body jsonb default '{}', params jsonb default '{}',
                                         headers jsonb default '{}',
                                         timeout_milliseconds int default 5000)
returns bigint language sql as $$ select 0::bigint $$;
create table if not exists vault.secrets (
  id uuid primary key default gen_random_uuid(), name text unique, secret text);
create or replace view vault.decrypted_secrets as
  select id, name, secret as decrypted_secret from vault.secrets;
)sql";

// realtime.send for --upstream_realtime: "notify" publishes ids only with pg_notify, as ours does
// with its events by default (a broadcast is sent at commit too); "none" does nothing.
std::string realtime_stub(const std::string& mode) {
  std::string body;
  if (mode == "notify") {
    body = "perform pg_notify('pgflow_upstream_events', left(topic || ' ' || event, 200));";
  } else if (mode != "none") {
    throw BenchError("--upstream_realtime must be notify or none");
  }
  return absl::StrCat(
      "create or replace function realtime.send(payload jsonb, event text, topic text, "
      "private boolean default true) returns void language plpgsql as $$ begin ",
      body, " end $$");
}

// ---- upstream's SQL ----

struct UpstreamSql {
  std::vector<fs::path> files;  // in the order they apply
  std::string version;          // from the package's package.json, or "?"
  std::string source;           // where they were found
};

// The "version" of the nearest package.json at or above `dir` (the package's root is up to
// three levels above its migrations), or "?".
std::string package_version(fs::path dir) {
  for (int up = 0; up < 4 && !dir.empty(); ++up, dir = dir.parent_path()) {
    std::ifstream in(dir / "package.json");
    if (!in) continue;
    std::stringstream text;
    text << in.rdbuf();
    const std::string json = text.str();
    size_t at = json.find("\"version\"");
    if (at == std::string::npos) continue;
    at = json.find('"', json.find(':', at));
    const size_t end = json.find('"', at + 1);
    if (at == std::string::npos || end == std::string::npos) continue;
    return json.substr(at + 1, end - at - 1);
  }
  return "?";
}

// A .sql file, a directory of them, or a directory with a migrations/ subdirectory (the layout
// of fetch-core.sh's cache).
UpstreamSql read_upstream_sql(const fs::path& path) {
  UpstreamSql sql{.files = {}, .version = "?", .source = path.string()};
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) {
    sql.files.push_back(path);
    sql.version = package_version(path.parent_path());
    return sql;
  }
  if (!fs::is_directory(path, ec)) throw BenchError("no file or directory " + path.string());
  const fs::path dir = fs::is_directory(path / "migrations", ec) ? path / "migrations" : path;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".sql")
      sql.files.push_back(entry.path());
  }
  if (sql.files.empty()) throw BenchError("no .sql files in " + dir.string());
  // Supabase applies migrations in the order of their names (timestamps).
  std::sort(sql.files.begin(), sql.files.end(),
            [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
  sql.version = package_version(dir);
  return sql;
}

// Where fetch-core.sh keeps release `version`: under this binary's build tree, or under
// build-bench/ or build/ of the source tree.
std::optional<fs::path> cached_upstream(const std::string& version) {
  std::vector<fs::path> roots;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) roots.push_back(exe.parent_path().parent_path() / "upstream");
  roots.push_back(fs::path(PGFLOW_SOURCE_DIR) / "build-bench" / "upstream");
  roots.push_back(fs::path(PGFLOW_SOURCE_DIR) / "build" / "upstream");
  for (const fs::path& root : roots) {
    const fs::path dir = root / ("pgflow-core-" + version) / "migrations";
    if (fs::is_directory(dir, ec)) return dir.parent_path();
  }
  return std::nullopt;
}

// Upstream's migration text with its CREATE EXTENSION statements for what this cluster provides
// otherwise (PGMQ, installed before; pg_net, pg_cron, supabase_vault, stubbed) commented out.
// They are one-line statements; a multi-line one would be left alone and fail loudly.
std::string without_provided_extensions(const std::string& text) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    const std::string lower = absl::AsciiStrToLower(absl_view(line));
    const bool provided =
        absl::StartsWith(absl::StripLeadingAsciiWhitespace(lower), "create extension") &&
        (absl::StrContains(lower, "pgmq") || absl::StrContains(lower, "pg_net") ||
         absl::StrContains(lower, "pg_cron") || absl::StrContains(lower, "supabase_vault"));
    absl::StrAppend(&out, provided ? "-- (pgflow_bench: provided) " : "", line, "\n");
  }
  return out;
}

// Runs `script` in one transaction on `db`; throws BenchError naming `what` when it fails.
void apply_script(Db& db, const std::string& what, std::string_view script) {
  absl::Status s = pg::in_transaction(db.connection(), [&]() -> absl::Status {
    // As a restore does: upstream's SQL functions may name objects the stubs do not define.
    PGFLOW_RETURN_IF_ERROR(db.connection().exec("set local check_function_bodies = off").status());
    return db.connection().exec_script(script);
  });
  if (!s.ok()) throw BenchError(absl::StrCat(what, ": ", s.message()));
}

// Installs upstream's schema into the empty database at `url`: PGMQ as ours has it (the PGMQ
// extension, or our bundled layer), the Supabase stand-ins, then upstream's migrations in order,
// each in one transaction (as `supabase db push` applies them).
void install_upstream(const std::string& url, const UpstreamSql& sql, bool pgmq_extension,
                      const std::string& realtime) {
  Db db = Db::open(url);
  if (pgmq_extension) {
    apply_script(db, "creating the PGMQ extension", "create extension if not exists pgmq");
  } else {
    apply_script(db, "installing the bundled PGMQ layer", internal::bundled_pgmq_sql());
  }
  apply_script(db, "creating the Supabase stand-ins",
               absl::StrCat(kSupabaseStubs, realtime_stub(realtime), ";"));
  for (const fs::path& file : sql.files) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) throw BenchError("cannot read " + file.string());
    apply_script(db, "upstream migration " + file.filename().string(),
                 without_provided_extensions(text.str()));
  }
  if (db.scalar("select to_regprocedure('pgflow.start_tasks(text, bigint[], uuid)') is not null "
                "and to_regprocedure('pgflow.complete_task(uuid, text, int, jsonb)') is not null "
                "and to_regprocedure('pgflow.start_flow(text, jsonb, uuid)') is not null") != "t") {
    throw BenchError(
        "upstream's schema has no start_flow(text, jsonb, uuid), start_tasks(text, bigint[], "
        "uuid) or complete_task(uuid, text, int, jsonb): not the protocol this section drives");
  }
}

// `url` pointing at database `name` of the same server (a later dbname wins in libpq).
std::string with_database(const std::string& url, const std::string& name) {
  if (absl::StartsWith(url, "postgresql://") || absl::StartsWith(url, "postgres://"))
    return url + (url.find('?') == std::string::npos ? "?" : "&") + "dbname=" + name;
  return url + " dbname=" + name;
}

// A second database on the bench's server, dropped with this object.
class ScratchDatabase {
 public:
  ScratchDatabase(Db& admin, std::string name) : admin_(admin), name_(std::move(name)) {
    admin_.exec("create database " + pg::quote_identifier(name_));
  }
  ~ScratchDatabase() {
    try {
      admin_.exec("drop database if exists " + pg::quote_identifier(name_) + " with (force)");
    } catch (const BenchError& e) {
      progress(absl::StrCat("u: could not drop database ", name_, ": ", e.what()));
    }
  }
  ScratchDatabase(const ScratchDatabase&) = delete;
  ScratchDatabase& operator=(const ScratchDatabase&) = delete;
  const std::string& name() const { return name_; }

 private:
  Db& admin_;
  std::string name_;
};

// ---- the systems compared ----

struct System {
  std::string label;  // "ours", "upstream 0.14.1"
  std::string url;
  bool upstream = false;
};

// A fresh one-step flow, built the way upstream's users build one in SQL.
std::string create_flow(const System& system) {
  Db db = Db::open(system.url);
  const std::string slug = unique_slug("bench_upstream");
  db.exec("select pgflow.create_flow($1::text)", {slug});
  db.exec("select pgflow.add_step($1::text, 'work')", {slug});
  return slug;
}

// Deletes the flow, its runs, queue and worker rows, and vacuums the run tables.
void remove_flow(const System& system, const std::string& slug) {
  Db db = Db::open(system.url);
  if (system.upstream) {
    // (delete_flow_and_data is not in every upstream release.)
    for (const char* sql :
         {"delete from pgflow.step_tasks where flow_slug = $1",
          "delete from pgflow.step_states where flow_slug = $1",
          "delete from pgflow.runs where flow_slug = $1",
          "delete from pgflow.workers where queue_name = $1",
          "delete from pgflow.deps where flow_slug = $1",
          "delete from pgflow.steps where flow_slug = $1",
          "delete from pgflow.flows where flow_slug = $1", "select pgmq.drop_queue($1)"}) {
      db.exec(sql, {slug});
    }
  } else {
    drop_flow(db, slug);
  }
  vacuum_run_tables(db);
}

std::int64_t completed_runs(const System& system, const std::string& slug) {
  Db db = Db::open(system.url);
  return db.integer(
      "select count(*) from pgflow.runs where flow_slug = $1 and status = 'completed'", {slug});
}

// Runs body(0..n-1) on n threads; rethrows the first failure once all have ended.
void run_parallel(int n, const std::function<void(int)>& body) {
  std::mutex mu;
  std::string error;
  {
    std::vector<std::jthread> threads;
    for (int i = 0; i < n; ++i) {
      threads.emplace_back([&, i] {
        try {
          body(i);
        } catch (const std::exception& e) {
          std::lock_guard<std::mutex> lock(mu);
          if (error.empty()) error = e.what();
        }
      });
    }
  }
  if (!error.empty()) throw BenchError(error);
}

// Producers: `clients` connections that start runs of one flow, one per autocommit transaction.
class Starters {
 public:
  Starters(const System& system, std::string slug, int clients) : slug_(std::move(slug)) {
    for (int i = 0; i < clients; ++i) dbs_.push_back(Db::open(system.url, "pgflow-bench-starter"));
  }

  // Starts `runs` runs, spread over the clients.
  void start(std::int64_t runs) {
    const int n = static_cast<int>(dbs_.size());
    run_parallel(n, [&](int c) {
      for (std::int64_t i = c; i < runs; i += n)
        dbs_[c].exec(kStartFlow, {slug_, std::to_string(i)});
    });
  }

  // Starts runs on every client for `seconds`; returns runs/s in each of `parts` equal parts.
  std::vector<double> sustain(double seconds, int parts) {
    std::atomic<std::int64_t> started{0};
    std::vector<double> rates;
    const Clock::time_point t0 = Clock::now();
    const Clock::time_point end =
        t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    std::jthread sampler([&] {
      std::int64_t before = 0;
      Clock::time_point from = t0;
      for (int p = 1; p <= parts; ++p) {
        std::this_thread::sleep_until(t0 + (end - t0) * p / parts);
        const Clock::time_point now = Clock::now();
        const std::int64_t count = started.load();
        rates.push_back(static_cast<double>(count - before) / seconds_between(from, now));
        before = count;
        from = now;
      }
    });
    const int n = static_cast<int>(dbs_.size());
    run_parallel(n, [&](int c) {
      for (std::int64_t i = c; Clock::now() < end; i += n) {
        dbs_[c].exec(kStartFlow, {slug_, std::to_string(i)});
        ++started;
      }
    });
    sampler.join();
    return rates;
  }

 private:
  std::string slug_;
  std::vector<Db> dbs_;
};

// Upstream's flow worker loop (sdk-upstream.md 2.5, 2.6) on one connection: a heartbeat every
// 5 s, read_with_poll (vt 5 s, up to `batch` messages, 2 s long poll), start_tasks with the
// message ids, then one complete_task per claimed task, each in its own transaction.
class ProtocolWorker {
 public:
  ProtocolWorker(const System& system, std::string slug, int batch)
      : db_(Db::open(system.url, "pgflow-bench-protocol-worker")),
        slug_(std::move(slug)),
        batch_(std::to_string(batch)) {
    worker_id_ = db_.scalar(system.upstream ? kRegisterUpstream : kRegisterOurs, {slug_});
    heartbeat_at_ = Clock::now();
  }

  // Completes `tasks` tasks; false when `deadline` came first.
  bool complete(std::int64_t tasks, Clock::time_point deadline) {
    std::int64_t done = 0;
    while (done < tasks) {
      if (Clock::now() >= deadline) return false;
      if (Clock::now() - heartbeat_at_ >= std::chrono::seconds(5)) {
        db_.exec(kHeartbeat, {worker_id_});
        heartbeat_at_ = Clock::now();
      }
      pg::Result messages = db_.exec(kReadWithPoll, {slug_, batch_});
      if (messages.rows() == 0) continue;
      const int msg_id = messages.column("msg_id");
      std::string ids = "{";
      for (int i = 0; i < messages.rows(); ++i)
        absl::StrAppend(&ids, i ? "," : "", absl_view(messages.text(i, msg_id)));
      ids += "}";
      pg::Result claimed = db_.exec(kStartTasks, {slug_, ids, worker_id_});
      const int run_id = claimed.column("run_id"), step_slug = claimed.column("step_slug"),
                task_index = claimed.column("task_index");
      for (int i = 0; i < claimed.rows(); ++i) {
        db_.exec(kCompleteTask,
                 {std::string(claimed.text(i, run_id)), std::string(claimed.text(i, step_slug)),
                  std::string(claimed.text(i, task_index)), std::string(kOutput)});
        ++done;
      }
    }
    return true;
  }

 private:
  Db db_;
  std::string slug_, batch_, worker_id_;
  Clock::time_point heartbeat_at_;
};

// ---- measuring ----

// One system's rounds of one row, summed; not finished once a round ran out of time.
struct Tally : CpuTally {
  bool finished = true;
};

// The items of round `round` when `total` are split over kRounds rounds.
std::int64_t round_share(std::int64_t total, int round) {
  return total / kRounds + (round < total % kRounds ? 1 : 0);
}

// Calls measure(system, round, tally) for every system in every round, alternating which
// system goes first, until a round does not finish.
std::vector<Tally> alternate(const std::vector<System>& systems,
                             const std::function<void(size_t, int, Tally&)>& measure) {
  std::vector<Tally> tallies(systems.size());
  for (int round = 0; round < kRounds; ++round) {
    for (size_t k = 0; k < systems.size(); ++k) {
      const size_t s = round % 2 == 0 ? k : systems.size() - 1 - k;
      measure(s, round, tallies[s]);
      if (!tallies[s].finished) return tallies;
    }
  }
  return tallies;
}

struct Comparison {
  std::vector<System> systems;  // ours, then upstream's when it could be installed
  std::string why_not;          // why upstream's is not measured
  bool compared() const { return systems.size() > 1; }
  std::string rounds() const {
    return absl::StrCat(kRounds, compared() ? " rounds, alternated with upstream's" : " rounds");
  }
};

// Removes each system's flow (slugs[s]); first, with `tallies`, marks a system's tally not
// finished unless every run it counted completed.
void remove_flows(const Comparison& cmp, const std::vector<std::string>& slugs,
                  std::vector<Tally>* tallies) {
  for (size_t s = 0; s < cmp.systems.size(); ++s) {
    if (tallies && (*tallies)[s].finished &&
        completed_runs(cmp.systems[s], slugs[s]) != (*tallies)[s].units) {
      (*tallies)[s].finished = false;
    }
    remove_flow(cmp.systems[s], slugs[s]);
  }
}

// Adds row `id` (ours' figure), upstream's figure under it, the row "<id>x" (ours / upstream)
// and the verdict on issue #30's "at least as fast as upstream".
void report_row(BenchContext& ctx, const Comparison& cmp, const std::string& id,
                const std::string& what, const std::string& unit, const std::vector<Tally>& tallies,
                const std::string& details) {
  const std::string name = "upstream protocol: " + what;
  const std::string verdict = absl::StrCat(id, " upstream's protocol, ", what, ", ours vs ",
                                           cmp.compared() ? cmp.systems[1].label : "upstream");
  const auto figures = [&](const Tally& t) {
    return absl::StrFormat("%d in %.2f s; %s", t.units, t.seconds,
                           t.per_unit(unit == "runs/s" ? "run" : "task"));
  };
  std::vector<std::string> unfinished;
  for (size_t s = 0; s < tallies.size(); ++s) {
    if (!tallies[s].finished) unfinished.push_back(cmp.systems[s].label);
  }
  if (!unfinished.empty()) {
    const std::string why =
        absl::StrFormat("a round of %s did not finish within %d s",
                        absl::StrJoin(unfinished, " and "), ctx.timeout.count() / 1000);
    ctx.report.add(
        {.id = id, .name = name + " (DID NOT FINISH)", .value = 0, .unit = unit, .note = why});
    if (cmp.compared() && !tallies[0].finished) {
      ctx.report.verdict(
          {.what = verdict, .met = false, .figure = why, .target = ">= 1x", .primary = false});
    }
    return;
  }
  ctx.report.add({.id = id,
                  .name = name + " (ours)",
                  .value = tallies[0].rate(),
                  .unit = unit,
                  .throughput = unit == "tasks/s",
                  .note = absl::StrCat(details, "; ours: ", figures(tallies[0])),
                  .server_us = tallies[0].server_us()});
  if (!cmp.compared()) return;  // (a note says why)
  ctx.report.add({.id = "",
                  .name = "",
                  .value = 0,
                  .unit = "",
                  .note = absl::StrFormat("%s: %.0f %s, %s", cmp.systems[1].label,
                                          tallies[1].rate(), unit, figures(tallies[1]))});
  ctx.report.add({.id = id + "x",
                  .name = absl::StrCat("ours / ", cmp.systems[1].label, ": ", what),
                  .value = tallies[0].rate() / tallies[1].rate(),
                  .unit = "x"});
  Verdict v = multiple_verdict(verdict, tallies[0].rate(), tallies[1].rate(), unit, 1.0,
                               /*at_most=*/false);
  v.primary = false;
  ctx.report.verdict(std::move(v));
}

// u1, u2: start_flow alone with 1 and 2 clients; u2s: 2 clients sustained, per part.
void measure_starts(BenchContext& ctx, const Comparison& cmp, const CpuMeter& meter,
                    std::int64_t runs) {
  const double sustain_seconds = static_cast<double>(ctx.flags.scaled("upstream_seconds", 3));
  for (int clients : {1, 2}) {
    progress(absl::StrFormat("u%d: start_flow, %d client(s), %d runs per system", clients, clients,
                             runs));
    std::vector<std::string> slugs;
    std::vector<Starters> starters;
    for (const System& system : cmp.systems) {
      slugs.push_back(create_flow(system));
      starters.emplace_back(system, slugs.back(), clients);
    }
    const std::vector<Tally> tallies =
        alternate(cmp.systems, [&](size_t s, int round, Tally& tally) {
          const std::int64_t n = round_share(runs, round);
          const CpuSample cpu0 = meter.sample();
          const Clock::time_point t0 = Clock::now();
          starters[s].start(n);
          tally.add(seconds_between(t0, Clock::now()), n, cpu0, meter.sample());
        });
    report_row(ctx, cmp, absl::StrCat("u", clients),
               absl::StrFormat("start_flow, %d client%s", clients, clients > 1 ? "s" : ""),
               "runs/s", tallies, "no worker; each start its own transaction; " + cmp.rounds());
    if (clients == 2) {
      // On the same flows, so the run tables keep growing as under a steady producer.
      std::vector<std::string> parts;
      double ours_trend = 0;
      for (size_t s = 0; s < cmp.systems.size(); ++s) {
        progress(absl::StrFormat("u2s: start_flow, 2 clients, sustained %.0f s, %s",
                                 sustain_seconds, cmp.systems[s].label));
        const std::vector<double> rates = starters[s].sustain(sustain_seconds, 3);
        if (s == 0) ours_trend = rates.back() / rates.front();
        parts.push_back(absl::StrCat(cmp.systems[s].label, " ",
                                     absl::StrJoin(rates, " / ",
                                                   [](std::string* out, double r) {
                                                     absl::StrAppend(out,
                                                                     absl::StrFormat("%.0f", r));
                                                   }),
                                     " runs/s"));
      }
      ctx.report.add(
          {.id = "u2s",
           .name = absl::StrFormat("start_flow, 2 clients, %.0f s: last / first third (ours)",
                                   sustain_seconds),
           .value = ours_trend,
           .unit = "x",
           .note = absl::StrCat("runs/s per third: ", absl::StrJoin(parts, "; "))});
    }
    starters.clear();
    remove_flows(cmp, slugs, nullptr);
  }
}

// u3: a pre-filled backlog drained by the protocol worker.
void measure_drain(BenchContext& ctx, const Comparison& cmp, const CpuMeter& meter,
                   std::int64_t runs) {
  progress(absl::StrFormat("u3: drain of %d runs per system by the protocol worker", runs));
  std::vector<std::string> slugs;
  std::vector<ProtocolWorker> workers;
  for (const System& system : cmp.systems) {
    slugs.push_back(create_flow(system));
    workers.emplace_back(system, slugs.back(), ctx.batch);
  }
  std::vector<Tally> tallies = alternate(cmp.systems, [&](size_t s, int round, Tally& tally) {
    const std::int64_t n = round_share(runs, round);
    {
      Db db = Db::open(cmp.systems[s].url);
      prefill_runs(db, slugs[s], n, "1");
    }
    const CpuSample cpu0 = meter.sample();
    const Clock::time_point t0 = Clock::now();
    tally.finished = workers[s].complete(n, t0 + ctx.timeout);
    tally.add(seconds_between(t0, Clock::now()), n, cpu0, meter.sample());
  });
  workers.clear();
  remove_flows(cmp, slugs, &tallies);
  report_row(ctx, cmp, "u3", "drain of a backlog", "tasks/s", tallies,
             absl::StrFormat("pre-filled (not timed), then read_with_poll(%d) -> start_tasks -> "
                             "complete_task per task on one connection; %s",
                             ctx.batch, cmp.rounds()));
}

// u4: one producer and the protocol worker at once.
void measure_mixed(BenchContext& ctx, const Comparison& cmp, const CpuMeter& meter,
                   std::int64_t runs) {
  progress(absl::StrFormat("u4: 1 producer + the protocol worker, %d runs per system", runs));
  std::vector<std::string> slugs;
  std::vector<Starters> starters;
  std::vector<ProtocolWorker> workers;
  for (const System& system : cmp.systems) {
    slugs.push_back(create_flow(system));
    starters.emplace_back(system, slugs.back(), 1);
    workers.emplace_back(system, slugs.back(), ctx.batch);
  }
  std::vector<Tally> tallies = alternate(cmp.systems, [&](size_t s, int round, Tally& tally) {
    const std::int64_t n = round_share(runs, round);
    const CpuSample cpu0 = meter.sample();
    const Clock::time_point t0 = Clock::now();
    run_parallel(2, [&](int role) {
      if (role == 0) {
        starters[s].start(n);
      } else {
        tally.finished = workers[s].complete(n, t0 + ctx.timeout);
      }
    });
    tally.add(seconds_between(t0, Clock::now()), n, cpu0, meter.sample());
  });
  starters.clear();
  workers.clear();
  remove_flows(cmp, slugs, &tallies);
  report_row(ctx, cmp, "u4", "1 producer + 1 worker at once", "tasks/s", tallies,
             "first start_flow to last complete_task; " + cmp.rounds());
}

}  // namespace

void run_upstream_protocol(BenchContext& ctx) {
  const std::int64_t runs = ctx.flags.scaled("upstream_runs", 20);
  Db admin = Db::open(ctx.url);
  const CpuMeter meter(admin);
  Comparison cmp;
  cmp.systems.push_back({.label = "ours", .url = ctx.url, .upstream = false});

  // Upstream's schema in a second database of this server, when its SQL is at hand.
  std::optional<UpstreamSql> sql;
  const std::string flag = ctx.flags.text("upstream_sql");
  try {
    if (flag == "none") {
      cmp.why_not = "--upstream_sql=none";
    } else if (!flag.empty()) {
      sql = read_upstream_sql(flag);
    } else if (std::optional<fs::path> cached = cached_upstream(kComparatorVersion)) {
      sql = read_upstream_sql(*cached);
    } else {
      cmp.why_not =
          absl::StrCat("upstream ", kComparatorVersion,
                       "'s SQL is not here: bench/upstream/fetch-core.sh fetches it with npm into "
                       "build-bench/upstream, or pass --upstream_sql=PATH");
    }
  } catch (const BenchError& e) {
    cmp.why_not = absl::StrCat("--upstream_sql: ", e.what());
  }
  std::optional<ScratchDatabase> upstream_db;
  if (sql) {
    const bool pgmq_extension =
        admin.scalar("select exists (select 1 from pg_extension where extname = 'pgmq')") == "t";
    progress(absl::StrFormat("u: installing upstream %s (%d migrations from %s) with %s",
                             sql->version, sql->files.size(), sql->source,
                             pgmq_extension ? "the PGMQ extension" : "the bundled PGMQ layer"));
    try {
      upstream_db.emplace(admin, unique_slug("bench_upstream_db"));
      const std::string url = with_database(ctx.url, upstream_db->name());
      install_upstream(url, *sql, pgmq_extension, ctx.flags.text("upstream_realtime"));
      cmp.systems.push_back({.label = sql->version == "?" ? "upstream" : "upstream " + sql->version,
                             .url = url,
                             .upstream = true});
    } catch (const BenchError& e) {
      cmp.why_not =
          absl::StrCat("upstream's SQL from ", sql->source, " could not be installed: ", e.what());
      upstream_db.reset();
    }
  }
  if (cmp.compared()) {
    ctx.report.note(absl::StrFormat(
        "u: upstream %s from %s, in database %s of the same server, on %s; Supabase objects "
        "stubbed (realtime.send: %s; pg_cron jobs never run); ours and upstream alternate round "
        "by round%s",
        sql->version, sql->source, upstream_db->name(),
        admin.scalar("select exists (select 1 from pg_extension where extname = 'pgmq')") == "t"
            ? "the PGMQ extension"
            : "our bundled PGMQ layer",
        ctx.flags.text("upstream_realtime"),
        sql->version == kComparatorVersion
            ? ""
            : absl::StrCat(" (issue #30 compares with ", kComparatorVersion, ")")));
  } else {
    ctx.report.note("u: ours only; upstream not measured: " + cmp.why_not);
    progress("u: ours only (" + cmp.why_not + ")");
  }

  measure_starts(ctx, cmp, meter, runs);
  measure_drain(ctx, cmp, meter, runs);
  measure_mixed(ctx, cmp, meter, runs);
}

}  // namespace pgflow::bench
