// pgflow_micro_bench: Google Benchmark micro-benchmarks.
//
//   BM_Direct_*         the typed step logic called directly (no JSON): the floor
//   BM_Erased_*         the same steps through the type-erased StepHandler the worker calls
//                       (JSON input -> typed arguments -> handler -> JSON output)
//   BM_Context_*        building the per-task Context as the worker does
//   BM_Json_*           nlohmann round trips of a user struct
//   BM_ShapeOf_*        shape_of() of a 30-step flow (done once per worker start)
//   BM_Sql_*, BM_Client_*  SQL call overheads against DATABASE_URL: a `select 1` round trip,
//                       pgflow.start_flow, pgflow.get_run_with_states (raw and through Client),
//                       Client::start_flow against the lean Client::start_run.
//                       Skipped, with a message, when DATABASE_URL is not set.
//
// The SQL benchmarks need a pgflow schema: the program runs pgflow::migrate on DATABASE_URL,
// creates a flow under a unique slug and deletes it (with its runs and queue) at the end.
// Each start_flow is its own transaction, so its time includes a WAL flush (commit).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "nlohmann/json.hpp"
#include "pg/connection.h"
#include "pgflow/client.h"
#include "pgflow/flow.h"
#include "pgflow/migrate.h"
#include "testing/large_flow.h"

namespace pgflow::micro {
namespace {

struct Signup {
  std::string email;
  std::string name;
  int age = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Signup, email, name, age)

struct Profile {
  std::string id;
  std::string email;
  bool vip = false;
  std::vector<std::string> tags;
  double score = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Profile, id, email, vip, tags, score)

struct Score {
  std::string id;
  int points = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Score, id, points)

Profile make_profile(const Signup& s) {
  return Profile{"u-" + s.email, s.email, s.age > 40, {"new", "web", s.name}, 0.5};
}
Score score_of(const Profile& p) {
  return Score{p.id, static_cast<int>(p.tags.size()) + (p.vip ? 10 : 0)};
}
int tag_length(const std::string& tag) { return static_cast<int>(tag.size()); }

const auto erasure_flow =
    Flow<"microErasure", Signup>()
        .step<"profile">([](const Signup& s) { return make_profile(s); })
        .step<"score">(after<"profile">, [](const Profile& p) { return score_of(p); })
        .array<"tags">(after<"profile">, [](const Profile& p) { return p.tags; })
        .map<"tagLength">(over<"tags">, [](const std::string& t) { return tag_length(t); });

const Signup kSignup{"ada@example.com", "Ada", 36};

Context make_context(std::optional<nlohmann::json> flow_input) {
  return Context(Context::Init{
      .flow_slug = "microErasure",
      .run_id = "5f1c2d5e-8f43-4c5e-9a7e-0d6f4b8a9c21",
      .step_slug = "profile",
      .task_index = 0,
      .attempt = 1,
      .message_id = "123456789",
      .flow_input = std::move(flow_input),
  });
}

// ---- DSL type erasure ----

void BM_Direct_DependentStep(benchmark::State& state) {
  const Profile p = make_profile(kSignup);
  for (auto _ : state) benchmark::DoNotOptimize(score_of(p));
}
BENCHMARK(BM_Direct_DependentStep);

void BM_Erased_RootStep(benchmark::State& state) {
  // Input {} and the run input from the Context, as the worker passes a root step.
  const StepHandler& h = erasure_flow.definition().find("profile")->handler;
  Context ctx = make_context(nlohmann::json(kSignup));
  const nlohmann::json input = nlohmann::json::object();
  for (auto _ : state) benchmark::DoNotOptimize(h(input, ctx));
}
BENCHMARK(BM_Erased_RootStep);

void BM_Erased_DependentStep(benchmark::State& state) {
  const StepHandler& h = erasure_flow.definition().find("score")->handler;
  Context ctx = make_context(std::nullopt);
  const nlohmann::json input = {{"profile", make_profile(kSignup)}};
  for (auto _ : state) benchmark::DoNotOptimize(h(input, ctx));
}
BENCHMARK(BM_Erased_DependentStep);

void BM_Erased_MapElement(benchmark::State& state) {
  const StepHandler& h = erasure_flow.definition().find("tagLength")->handler;
  Context ctx = make_context(std::nullopt);
  const nlohmann::json input = "a-tag";
  for (auto _ : state) benchmark::DoNotOptimize(h(input, ctx));
}
BENCHMARK(BM_Erased_MapElement);

void BM_Erased_FailingStep(benchmark::State& state) {
  // A dependency output that does not convert: the error path builds a Status message.
  const StepHandler& h = erasure_flow.definition().find("score")->handler;
  Context ctx = make_context(std::nullopt);
  const nlohmann::json input = {{"profile", 42}};
  for (auto _ : state) benchmark::DoNotOptimize(h(input, ctx));
}
BENCHMARK(BM_Erased_FailingStep);

void BM_Context_Build(benchmark::State& state) {
  const nlohmann::json flow_input = kSignup;
  for (auto _ : state) {
    Context ctx = make_context(flow_input);
    benchmark::DoNotOptimize(ctx);
  }
}
BENCHMARK(BM_Context_Build);

// ---- JSON round trips ----

void BM_Json_StructToJsonAndBack(benchmark::State& state) {
  const Profile p = make_profile(kSignup);
  for (auto _ : state) {
    nlohmann::json j = p;
    benchmark::DoNotOptimize(j.get<Profile>());
  }
}
BENCHMARK(BM_Json_StructToJsonAndBack);

void BM_Json_StructToTextAndBack(benchmark::State& state) {
  // What crosses the wire: struct -> JSON text (to the database) -> JSON -> struct.
  const Profile p = make_profile(kSignup);
  for (auto _ : state) {
    const std::string text = nlohmann::json(p).dump();
    benchmark::DoNotOptimize(nlohmann::json::parse(text).get<Profile>());
  }
}
BENCHMARK(BM_Json_StructToTextAndBack);

void BM_Json_ParseClaimRow(benchmark::State& state) {
  // The worker parses a claim's input column per task.
  const std::string text = nlohmann::json({{"profile", make_profile(kSignup)}}).dump();
  for (auto _ : state) benchmark::DoNotOptimize(nlohmann::json::parse(text, nullptr, false));
}
BENCHMARK(BM_Json_ParseClaimRow);

// ---- shape_of of a 30-step flow (tests/testing/large_flow.h) ----

const auto& large = pgflow::testing::large::flow;
static_assert(decltype(pgflow::testing::large::flow)::step_count == 30);

void BM_ShapeOf_30Steps(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(shape_of(large));
}
BENCHMARK(BM_ShapeOf_30Steps);

void BM_ShapeOf_30StepsDump(benchmark::State& state) {
  // As the worker sends it to ensure_flow_compiled.
  for (auto _ : state) benchmark::DoNotOptimize(shape_of(large).dump());
}
BENCHMARK(BM_ShapeOf_30StepsDump);

// ---- SQL call overheads (DATABASE_URL) ----

struct Database {
  std::string url;
  std::string slug;
  std::string run_id;
  bool created = false;  // the flow exists (delete it at the end)
  std::optional<pg::Connection> conn;
  std::optional<Client> client;
};
Database* db = nullptr;

// Marks the benchmark failed on an error; the caller then leaves its loop.
template <typename T>
bool ok(const absl::StatusOr<T>& r, benchmark::State& state) {
  if (!r.ok()) state.SkipWithError(std::string(r.status().message()).c_str());
  return r.ok();
}

void BM_Sql_Select1(benchmark::State& state) {
  for (auto _ : state) {
    absl::StatusOr<pg::Result> r = db->conn->exec("select 1");
    if (!ok(r, state)) break;
    benchmark::DoNotOptimize(r);
  }
}

void BM_Sql_StartFlow(benchmark::State& state) {
  const std::string input = nlohmann::json(kSignup).dump();
  for (auto _ : state) {
    absl::StatusOr<pg::Result> r =
        db->conn->exec("select run_id from pgflow.start_flow($1, $2::jsonb)", {db->slug, input});
    if (!ok(r, state)) break;
    benchmark::DoNotOptimize(r);
  }
}

void BM_Client_StartFlow(benchmark::State& state) {
  // Client::start_flow: pgflow.start_flow_with_states, parsed into a RunState.
  for (auto _ : state) {
    absl::StatusOr<RunState> run = db->client->start_flow(db->slug, nlohmann::json(kSignup));
    if (!ok(run, state)) break;
    benchmark::DoNotOptimize(run);
  }
}

void BM_Client_StartRun(benchmark::State& state) {
  // Client::start_run: pgflow.start_run, only the run id back (the lean start).
  for (auto _ : state) {
    absl::StatusOr<std::string> run_id = db->client->start_run(db->slug, nlohmann::json(kSignup));
    if (!ok(run_id, state)) break;
    benchmark::DoNotOptimize(run_id);
  }
}

void BM_Sql_GetRunWithStates(benchmark::State& state) {
  for (auto _ : state) {
    absl::StatusOr<pg::Result> r =
        db->conn->exec("select pgflow.get_run_with_states($1::uuid)::text", {db->run_id});
    if (!ok(r, state)) break;
    benchmark::DoNotOptimize(r);
  }
}

void BM_Client_GetRun(benchmark::State& state) {
  for (auto _ : state) {
    absl::StatusOr<RunState> run = db->client->get_run(db->run_id);
    if (!ok(run, state)) break;
    benchmark::DoNotOptimize(run);
  }
}

// Migrates, creates the flow and one run; false (with a message) when that fails.
bool set_up_database(const char* url) {
  db = new Database{url, absl::StrCat("micro_p", getpid()), "", false, std::nullopt, std::nullopt};
  if (absl::Status s = migrate(db->url); !s.ok()) {
    std::fprintf(stderr, "pgflow_micro_bench: migrate failed: %s\n",
                 std::string(s.message()).c_str());
    return false;
  }
  absl::StatusOr<pg::Connection> conn = pg::Connection::open(db->url, "pgflow-micro-bench");
  absl::StatusOr<Client> client =
      Client::connect({.connection_string = db->url, .max_connections = 1});
  if (!conn.ok() || !client.ok()) {
    std::fprintf(stderr, "pgflow_micro_bench: cannot connect: %s\n",
                 std::string((conn.ok() ? client.status() : conn.status()).message()).c_str());
    return false;
  }
  db->conn = std::move(*conn);
  db->client = std::move(*client);
  FlowDefinition def = erasure_flow.definition();
  def.slug = db->slug;
  absl::StatusOr<pg::Result> compiled = db->conn->exec(
      "select pgflow.ensure_flow_compiled($1, $2::jsonb, pgflow.worker_protocol())::text",
      {db->slug, shape_of(def).dump()});
  db->created = compiled.ok();
  if (!compiled.ok()) {
    std::fprintf(stderr, "pgflow_micro_bench: set-up failed: %s\n",
                 std::string(compiled.status().message()).c_str());
    return false;
  }
  absl::StatusOr<pg::Result> run =
      db->conn->exec("select run_id::text from pgflow.start_flow($1, $2::jsonb)",
                     {db->slug, nlohmann::json(kSignup).dump()});
  if (!run.ok()) {
    std::fprintf(stderr, "pgflow_micro_bench: set-up failed: %s\n",
                 std::string(run.status().message()).c_str());
    return false;
  }
  db->run_id = std::string(run->scalar());
  return true;
}

void tear_down_database() {
  if (db == nullptr) return;
  if (db->conn && db->created) {
    absl::StatusOr<pg::Result> r =
        db->conn->exec("select pgflow.delete_flow_and_data($1)", {db->slug});
    if (!r.ok())
      std::fprintf(stderr, "pgflow_micro_bench: clean-up failed: %s\n",
                   std::string(r.status().message()).c_str());
  }
  delete db;
  db = nullptr;
}

}  // namespace
}  // namespace pgflow::micro

int main(int argc, char** argv) {
  using namespace pgflow::micro;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const char* url = std::getenv("DATABASE_URL");
  if (url == nullptr || *url == '\0') {
    std::fprintf(
        stderr,
        "pgflow_micro_bench: DATABASE_URL is not set: skipping the SQL benchmarks (BM_Sql_*, "
        "BM_Client_*). Set it to a PostgreSQL database you may write to (the program installs "
        "pgflow there, creates one flow and deletes it again), e.g. with scripts/pgcluster.\n");
  } else if (!set_up_database(url)) {
    std::fprintf(stderr, "pgflow_micro_bench: skipping the SQL benchmarks.\n");
  } else {
    auto real_time = [](benchmark::internal::Benchmark* b) {
      b->UseRealTime()->Unit(benchmark::kMicrosecond);
    };
    real_time(benchmark::RegisterBenchmark("BM_Sql_Select1", BM_Sql_Select1));
    real_time(benchmark::RegisterBenchmark("BM_Sql_StartFlow", BM_Sql_StartFlow));
    real_time(benchmark::RegisterBenchmark("BM_Client_StartFlow", BM_Client_StartFlow));
    real_time(benchmark::RegisterBenchmark("BM_Client_StartRun", BM_Client_StartRun));
    real_time(benchmark::RegisterBenchmark("BM_Sql_GetRunWithStates", BM_Sql_GetRunWithStates));
    real_time(benchmark::RegisterBenchmark("BM_Client_GetRun", BM_Client_GetRun));
  }
  benchmark::RunSpecifiedBenchmarks();
  tear_down_database();
  benchmark::Shutdown();
  return 0;
}
