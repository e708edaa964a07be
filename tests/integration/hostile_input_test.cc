// Hostile input through every public string and JSON entry point, against the real database,
// driven by the case table tests/data/hostile_inputs.tsv (tests/sql/hostile_inputs/ reads the
// same file; tests/data/README.md describes it): flow aliases and slugs, run ids, cancel
// reasons, run inputs and handler outputs, worker function names and hand-built flow slugs.
// Every case is either refused with its status code and a message naming the problem, with
// nothing written (the database's rows compared before and after), or accepted and read back
// unchanged. None may crash the process: 100 000 levels of nesting would overflow the stack in
// nlohmann's recursive copy and dump, a NUL byte would cut a libpq parameter short.
#include <cctype>
#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pgflow/client.h"
#include "pgflow/flow.h"
#include "pgflow/flow_definition.h"
#include "pgflow/status.h"
#include "pgflow/worker.h"
#include "testing/client_test_base.h"
#include "testing/status_matchers.h"
#include "testing/worker_harness.h"

namespace pgflow {
namespace {

using ::nlohmann::json;
using pgflow::testing::IsOk;
using pgflow::testing::IsOkAndHolds;
using pgflow::testing::LogRecorder;
using pgflow::testing::query_text;
using pgflow::testing::StatusIs;
using pgflow::testing::test_worker_config;
using pgflow::testing::wait_until;
using ::testing::AllOf;
using ::testing::HasSubstr;

// ---- the case table ----------------------------------------------------------------------

struct Case {
  std::string name, target, encoding, value, cpp_code, cpp_message, sqlstate, sql_message;
};

// One field of PostgreSQL's COPY text format: \\, \t, \n, \r, \b, \f, \v, \xH[H] and \ooo.
std::string copy_unescape(std::string_view field) {
  std::string out;
  auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  auto digit = [](char c) -> int { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; };
  for (std::size_t i = 0; i < field.size(); ++i) {
    if (field[i] != '\\' || i + 1 == field.size()) {
      out += field[i];
      continue;
    }
    const char e = field[++i];
    switch (e) {
      case 't':
        out += '\t';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'v':
        out += '\v';
        break;
      case 'x':
        if (i + 1 < field.size() && hex(field[i + 1])) {
          int v = digit(field[++i]);
          if (i + 1 < field.size() && hex(field[i + 1])) v = v * 16 + digit(field[++i]);
          out += static_cast<char>(v);
        } else {
          out += 'x';
        }
        break;
      default:
        if (e >= '0' && e <= '7') {
          int v = e - '0';
          for (int k = 0;
               k < 2 && i + 1 < field.size() && field[i + 1] >= '0' && field[i + 1] <= '7'; ++k) {
            v = v * 8 + (field[++i] - '0');
          }
          out += static_cast<char>(v);
        } else {
          out += e;  // \\ and any other escaped character stand for themselves
        }
    }
  }
  return out;
}

std::vector<Case> load_cases() {
  std::ifstream in(PGFLOW_HOSTILE_INPUTS_TSV, std::ios::binary);
  std::vector<Case> cases;
  std::string line;
  if (!std::getline(in, line)) return cases;  // header
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    for (absl::string_view part : absl::StrSplit(line, '\t')) {
      f.push_back(copy_unescape(std::string_view(part.data(), part.size())));
    }
    if (f.size() != 8) {
      ADD_FAILURE() << "hostile_inputs.tsv: a line without 8 fields: " << line;
      continue;
    }
    cases.push_back(Case{f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7]});
  }
  return cases;
}

const std::vector<Case>& cases() {
  static const std::vector<Case>* all = new std::vector<Case>(load_cases());
  return *all;
}

std::vector<const Case*> cases_of(std::string_view target) {
  std::vector<const Case*> out;
  for (const Case& c : cases()) {
    if (c.target == target) out.push_back(&c);
  }
  return out;
}

const Case* case_named(std::string_view name) {
  for (const Case& c : cases()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

absl::StatusCode code_of(std::string_view name) {
  if (name == "OK") return absl::StatusCode::kOk;
  if (name == "INVALID_ARGUMENT") return absl::StatusCode::kInvalidArgument;
  if (name == "NOT_FOUND") return absl::StatusCode::kNotFound;
  ADD_FAILURE() << "unknown cpp_code " << name;
  return absl::StatusCode::kUnknown;
}

std::string from_hex(std::string_view hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
  }
  return out;
}

// "name:a:b" -> {"name", "a", "b"}
std::vector<std::string> generator(const Case& c) { return absl::StrSplit(c.value, ':'); }

std::size_t count_of(std::string_view text) {
  std::size_t n = 0;
  EXPECT_TRUE(absl::SimpleAtoi(absl::string_view(text.data(), text.size()), &n)) << text;
  return n;
}

// The bytes of a string case (every target but json).
std::string string_value(const Case& c) {
  if (c.encoding == "text") return c.value;
  if (c.encoding == "hex") return from_hex(c.value);
  const std::vector<std::string> g = generator(c);
  if (g.size() == 3 && g[0] == "repeat" && g[1].size() == 1)
    return std::string(count_of(g[2]), g[1][0]);
  ADD_FAILURE() << c.name << ": unknown string generator " << c.value;
  return {};
}

// The JSON of a json case; nullopt when nlohmann cannot hold it (its parser refuses the text).
std::optional<json> json_value(const Case& c) {
  if (c.encoding == "text") {
    json j = json::parse(c.value, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return std::nullopt;
    return j;
  }
  const std::vector<std::string> g = generator(c);
  if (g.size() == 2 && g[0] == "json_string") return json{{"s", std::string(count_of(g[1]), 'x')}};
  if (g.size() == 2 && g[0] == "json_bytes") return json{{"s", from_hex(g[1])}};
  if (g.size() == 2 && g[0] == "json_double") {
    const double inf = std::numeric_limits<double>::infinity();
    return json{{"x", g[1] == "nan" ? std::nan("") : g[1] == "inf" ? inf : -inf}};
  }
  if (g.size() == 2 && (g[0] == "json_nested_arrays" || g[0] == "json_nested_objects")) {
    // Built from the inside out, without recursion.
    const bool arrays = g[0] == "json_nested_arrays";
    json j = arrays ? json::array() : json::object();
    for (std::size_t level = 1; level < count_of(g[1]); ++level) {
      json outer = arrays ? json::array() : json::object();
      if (arrays) {
        outer.push_back(std::move(j));
      } else {
        outer["a"] = std::move(j);
      }
      j = std::move(outer);
    }
    return j;
  }
  ADD_FAILURE() << c.name << ": unknown json generator " << c.value;
  return json();
}

// A big value is compared by length in the database rather than read back whole.
bool is_big(const Case& c) { return c.value.rfind("json_string:", 0) == 0; }

// A run id in PostgreSQL's canonical spelling.
std::string canonical_uuid(std::string_view id) {
  std::string hex;
  for (char ch : id) {
    if (std::isxdigit(static_cast<unsigned char>(ch)))
      hex += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  }
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
         hex.substr(16, 4) + "-" + hex.substr(20);
}

// ---- flows whose handler returns a case's JSON ------------------------------------------

// What a handler returns for the run input {"case": name}.
json output_of(const json& input) {
  const Case* c = input.is_object() && input.contains("case")
                      ? case_named(input["case"].get<std::string>())
                      : nullptr;
  if (c == nullptr) return input;
  std::optional<json> j = json_value(*c);
  return j ? std::move(*j) : json();
}

// A typed handler: its result is checked by the typed wrapper before it is copied. Reporting a
// 100 MB output takes the SQL core about ten seconds (minutes on a loaded machine or under a
// sanitizer): a one-hour timeout keeps stall recovery out of what the test checks.
inline const auto host =
    pgflow::Flow<"hHost", json>({.max_attempts = 1, .timeout = 3600})
        .step<"emit">([](const json& input) -> json { return output_of(input); });

// A hand-built handler: nothing checks its result before the worker reports it.
FlowDefinition raw_flow() {
  FlowDefinition flow;
  flow.slug = "hRaw";
  flow.options.max_attempts = 1;
  StepDefinition emit;
  emit.slug = "emit";
  emit.handler = [](const json&, Context& ctx) -> absl::StatusOr<json> {
    absl::StatusOr<json> input = ctx.flow_input();
    if (!input.ok()) return input.status();
    return output_of(*input);
  };
  flow.steps.push_back(std::move(emit));
  return flow;
}

// ---- the fixture -------------------------------------------------------------------------

class HostileInputTest : public pgflow::testing::ClientTestBase {
 protected:
  void SetUp() override {
    ClientTestBase::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_FALSE(cases().empty()) << "no cases in " << PGFLOW_HOSTILE_INPUTS_TSV;
    compile(host);
  }

  // Everything a refused call could have written: row counts and a digest of every table the
  // entry points touch, the queue's messages, and the aliases.
  std::string snapshot() {
    return sql(
        "select concat_ws(' | ',"
        " (select count(*) || ' flows ' || md5(coalesce(string_agg(md5(f::text), ',' order by "
        "f.flow_slug), '')) from pgflow.flows f),"
        " (select count(*) || ' steps' from pgflow.steps),"
        " (select count(*) || ' aliases ' || coalesce(string_agg(a.flow_alias || '=' || "
        "a.flow_slug, ','), '') from pgflow.flow_aliases a),"
        " (select count(*) || ' runs ' || md5(coalesce(string_agg(md5(r::text), ',' order by "
        "r.run_id), '')) from pgflow.runs r),"
        " (select count(*) || ' step states ' || md5(coalesce(string_agg(md5(s::text), ',' order "
        "by s.run_id, s.step_slug), '')) from pgflow.step_states s),"
        " (select count(*) || ' tasks ' || md5(coalesce(string_agg(md5(t::text), ',' order by "
        "t.run_id, t.step_slug), '')) from pgflow.step_tasks t),"
        " (select count(*) || ' workers' from pgflow.workers),"
        " (select count(*) || ' functions ' || coalesce(string_agg(w.function_name, ','), '') from "
        "pgflow.worker_functions w),"
        " (select count(*) || ' queued' from pgmq.q_hhost), (select count(*) || ' archived' from "
        "pgmq.a_hhost))");
  }

  // A run of hHost that stays started (no worker runs in these tests unless they start one).
  std::string started_run() {
    absl::StatusOr<std::string> id = client_->start_run("hHost", json::object());
    EXPECT_THAT(id, IsOk());
    return id.ok() ? *id : std::string();
  }
};

// The expected status of a case: its code, and its message in the status message.
auto expected(const Case& c) { return StatusIs(code_of(c.cpp_code), HasSubstr(c.cpp_message)); }

TEST_F(HostileInputTest, TheCaseTableCoversEveryTargetAndBothOutcomes) {
  for (const char* target :
       {"alias", "slug", "run_id", "reason", "json", "function_name", "definition"}) {
    std::vector<const Case*> rows = cases_of(target);
    EXPECT_GE(rows.size(), 2u) << target;
  }
  int accepted = 0, refused = 0;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(case_named(c.name), &c) << "case names are unique";
    EXPECT_THAT(c.target, ::testing::AnyOf("alias", "slug", "run_id", "reason", "json",
                                           "function_name", "definition"));
    EXPECT_THAT(c.encoding, ::testing::AnyOf("text", "hex", "gen"));
    EXPECT_THAT(c.cpp_code, ::testing::AnyOf("OK", "INVALID_ARGUMENT", "NOT_FOUND", "-"));
    EXPECT_EQ(c.cpp_code == "OK" || c.cpp_code == "-", c.cpp_message.empty())
        << "a refusal names its message";
    EXPECT_EQ(c.sqlstate.empty(), c.sql_message.empty());
    (c.cpp_code == "OK" ? accepted : refused) += 1;
  }
  EXPECT_GT(accepted, 0);
  EXPECT_GT(refused, 0);
}

TEST_F(HostileInputTest, FlowAliasesAreRefusedBeforeTheDatabaseOrNotFound) {
  for (const Case* c : cases_of("alias")) {
    SCOPED_TRACE(c->name);
    const std::string alias = string_value(*c);
    const std::string before = snapshot();
    EXPECT_THAT(client_->start_flow(alias, json::object()), expected(*c));
    EXPECT_THAT(client_->start_flow_by_alias(alias, json::object()), expected(*c));
    EXPECT_THAT(client_->start_run(alias, json::object()), expected(*c));
    EXPECT_THAT(client_->in_transaction(
                    [&](Transaction& tx) { return tx.start_flow(alias, json::object()).status(); }),
                expected(*c));
    EXPECT_THAT(client_->in_transaction(
                    [&](Transaction& tx) { return tx.start_run(alias, json::object()).status(); }),
                expected(*c));
    absl::StatusOr<FlowAlias> activated =
        client_->activate_flow_version(alias, "hHost", std::nullopt);
    if (c->cpp_code == "NOT_FOUND") {
      // A well-formed alias that hHost is not a version of.
      EXPECT_THAT(activated, StatusIs(absl::StatusCode::kInvalidArgument,
                                      HasSubstr("is a version of alias \"hHost\"")));
    } else {
      EXPECT_THAT(activated, expected(*c));
    }
    if (c->encoding == "hex") {
      EXPECT_EQ(sql_state(client_->start_run(alias, json::object()).status()), "22021")
          << "the SQLSTATE the database gives bytes that are not UTF-8";
    }
    EXPECT_EQ(snapshot(), before);
  }
}

TEST_F(HostileInputTest, FlowSlugsAreRefusedBeforeTheDatabaseOrNotFound) {
  for (const Case* c : cases_of("slug")) {
    SCOPED_TRACE(c->name);
    const std::string slug = string_value(*c);
    const std::string before = snapshot();
    EXPECT_THAT(client_->start_flow_by_slug(slug, json::object()), expected(*c));
    EXPECT_THAT(client_->start_run_by_slug(slug, json::object()), expected(*c));
    EXPECT_THAT(client_->in_transaction([&](Transaction& tx) {
      return tx.start_flow_by_slug(slug, json::object()).status();
    }),
                expected(*c));
    EXPECT_THAT(client_->activate_flow_version("hHost", slug, std::nullopt), expected(*c));
    EXPECT_EQ(snapshot(), before);
  }
}

TEST_F(HostileInputTest, RunIdsThatAreNotUuidsAreRefusedAndOtherSpellingsAreRead) {
  const std::string cancelled = started_run();
  ASSERT_THAT(client_->cancel_run(cancelled), IsOkAndHolds(true));
  for (const Case* c : cases_of("run_id")) {
    SCOPED_TRACE(c->name);
    const std::string id = string_value(*c);
    const std::string before = snapshot();
    auto subscribed = client_->subscribe([](const RunEvent&) {}, id);
    // Reads and run control of the run `id`.
    EXPECT_THAT(client_->get_run(id), expected(*c));
    EXPECT_THAT(client_->wait_for_run(id, std::chrono::milliseconds(0)), expected(*c));
    EXPECT_THAT(client_->cancel_run(id, "hostile"), expected(*c));
    EXPECT_THAT(client_->retry_run(id), expected(*c));
    EXPECT_THAT(client_->resume_run(id), expected(*c));
    EXPECT_THAT(
        client_->in_transaction([&](Transaction& tx) { return tx.cancel_run(id).status(); }),
        expected(*c));
    // `id` as the id of a new run: refused, or (a valid spelling) used in its canonical form.
    // Each in a transaction the test rolls back.
    absl::StatusOr<std::string> started = absl::UnknownError("not run");
    absl::StatusOr<std::string> retried = absl::UnknownError("not run");
    const absl::Status rolled_back = absl::AbortedError("rolled back by the test");
    EXPECT_EQ(client_->in_transaction([&](Transaction& tx) {
      started = tx.start_run("hHost", json::object(), id);
      return rolled_back;
    }),
              rolled_back);
    EXPECT_EQ(client_->in_transaction([&](Transaction& tx) {
      retried = tx.retry_run(cancelled, id);
      return rolled_back;
    }),
              rolled_back);
    if (c->cpp_code == "INVALID_ARGUMENT") {
      EXPECT_THAT(subscribed, expected(*c));
      EXPECT_THAT(started, expected(*c));
      EXPECT_THAT(client_->start_flow("hHost", json::object(), id), expected(*c));
      EXPECT_THAT(retried,
                  StatusIs(absl::StatusCode::kInvalidArgument,
                           AllOf(HasSubstr("pgflow: new run id \""), HasSubstr(c->cpp_message))));
      EXPECT_EQ(sql_state(started.status()), "22P02")
          << "the SQLSTATE the database gives a malformed uuid";
    } else {
      EXPECT_THAT(subscribed, IsOk());
      EXPECT_THAT(started, IsOkAndHolds(canonical_uuid(id)));
      EXPECT_THAT(retried, IsOkAndHolds(canonical_uuid(id)));
    }
    EXPECT_EQ(snapshot(), before);
  }
}

TEST_F(HostileInputTest, CancelReasonsAreStoredAsGivenOrRefused) {
  for (const Case* c : cases_of("reason")) {
    SCOPED_TRACE(c->name);
    const std::string reason = string_value(*c);
    const std::string run = started_run();
    const std::string before = snapshot();
    if (c->cpp_code == "OK") {
      EXPECT_THAT(client_->cancel_run(run, reason), IsOkAndHolds(true));
      PGFLOW_ASSERT_OK_AND_ASSIGN(RunState state, client_->get_run(run));
      EXPECT_TRUE(state.cancelled());
      EXPECT_EQ(state.cancel_reason, reason);
      continue;
    }
    EXPECT_THAT(client_->cancel_run(run, reason), expected(*c));
    EXPECT_THAT(client_->in_transaction(
                    [&](Transaction& tx) { return tx.cancel_run(run, reason).status(); }),
                expected(*c));
    EXPECT_EQ(sql_state(client_->cancel_run(run, reason).status()), c->sqlstate);
    EXPECT_EQ(snapshot(), before);
  }
}

TEST_F(HostileInputTest, RunInputsRoundTripOrAreRefusedWithoutReachingTheDatabase) {
  for (const Case* c : cases_of("json")) {
    SCOPED_TRACE(c->name);
    std::optional<json> input = json_value(*c);
    if (c->cpp_code == "-") {
      EXPECT_FALSE(input.has_value()) << "nlohmann's parser refuses it: no C++ caller can pass it";
      continue;
    }
    ASSERT_TRUE(input.has_value());
    const std::string before = snapshot();
    if (c->cpp_code == "OK") {
      PGFLOW_ASSERT_OK_AND_ASSIGN(std::string id, client_->start_run("hHost", *input));
      if (is_big(*c)) {
        EXPECT_EQ(sql("select octet_length(input->>'s') from pgflow.runs where run_id = $1", {id}),
                  std::to_string((*input)["s"].get_ref<const std::string&>().size()));
        continue;
      }
      PGFLOW_ASSERT_OK_AND_ASSIGN(RunState read, client_->get_run(id));
      EXPECT_EQ(read.input, *input);
      PGFLOW_ASSERT_OK_AND_ASSIGN(RunState started, client_->start_flow("hHost", *input));
      EXPECT_EQ(started.input, *input);
      PGFLOW_ASSERT_OK_AND_ASSIGN(RunState pinned, client_->start_flow_by_slug("hHost", *input));
      EXPECT_EQ(pinned.input, *input);
      continue;
    }
    const auto refused =
        StatusIs(code_of(c->cpp_code),
                 AllOf(HasSubstr("the input " + c->cpp_message), HasSubstr("starting flow")));
    EXPECT_THAT(client_->start_flow("hHost", *input), refused);
    EXPECT_THAT(client_->start_run("hHost", *input), refused);
    EXPECT_THAT(client_->start_flow_by_slug("hHost", *input), refused);
    EXPECT_THAT(client_->start_run_by_slug("hHost", *input), refused);
    EXPECT_THAT(client_->in_transaction(
                    [&](Transaction& tx) { return tx.start_flow("hHost", *input).status(); }),
                refused);
    if (c->sqlstate == "22P05" || c->sqlstate == "22021") {
      EXPECT_EQ(sql_state(client_->start_run("hHost", *input).status()), c->sqlstate)
          << "the SQLSTATE the database gives the same value";
    }
    EXPECT_EQ(snapshot(), before);
  }
}

// Runs the json cases through `flow_slug`'s handler (a worker of it runs): accepted outputs are
// stored unchanged; refused ones fail the attempt with a message containing the case's and
// `prefix`, and the worker goes on. `big`: also the 100 MB output.
void check_outputs(Client& client, pg::Connection& conn, const std::string& flow_slug,
                   const std::string& prefix, bool big) {
  for (const Case* c : cases_of("json")) {
    if (c->cpp_code == "-" || (is_big(*c) && !big)) continue;
    SCOPED_TRACE(c->name);
    PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run,
                                client.start_run(flow_slug, json{{"case", c->name}}));
    // (completing a 100 MB output takes the SQL core about ten seconds: a generous guard)
    ASSERT_THAT(wait_until(conn, "select status <> 'started' from pgflow.runs where run_id = $1",
                           {run}, std::chrono::seconds(600)),
                IsOk());
    PGFLOW_ASSERT_OK_AND_ASSIGN(
        std::string outcome,
        query_text(conn,
                   "select r.status || ' ' || coalesce(t.error_message, '') from pgflow.runs r"
                   " join pgflow.step_tasks t on t.run_id = r.run_id where r.run_id = $1",
                   {run}));
    if (c->cpp_code != "OK") {
      EXPECT_THAT(outcome, AllOf(HasSubstr("failed " + prefix), HasSubstr(c->cpp_message)));
      continue;
    }
    EXPECT_EQ(outcome, "completed ");
    const std::optional<json> expected_output = json_value(*c);
    if (is_big(*c)) {
      EXPECT_THAT(
          query_text(conn,
                     "select octet_length(output->>'s') from pgflow.step_states where run_id = $1",
                     {run}),
          IsOkAndHolds(
              std::to_string((*expected_output)["s"].get_ref<const std::string&>().size())));
      continue;
    }
    PGFLOW_ASSERT_OK_AND_ASSIGN(
        std::string stored,
        query_text(
            conn,
            "select coalesce(output::text, 'SQL NULL') from pgflow.step_states where run_id = $1",
            {run}));
    EXPECT_EQ(json::parse(stored), *expected_output);
  }
}

TEST_F(HostileInputTest, TypedHandlerOutputsAreStoredOrFailTheAttempt) {
  LogRecorder logs;
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker,
                              EdgeWorker::start(host, test_worker_config(db_->url(), &logs)));
  check_outputs(
      *client_, *conn_, "hHost",
      "flow \"hHost\", step \"emit\": cannot convert the handler's result to JSON: the result ",
      /*big=*/true);
  EXPECT_TRUE(worker.running());
  worker.stop();
  EXPECT_THAT(worker.wait(), IsOk());
  for (const LogRecorder::Entry& e : logs.entries())
    EXPECT_LT(e.text().size(), 4096u) << "no output body in logs";
}

TEST_F(HostileInputTest, HandBuiltHandlerOutputsAreStoredOrFailTheAttempt) {
  LogRecorder logs;
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker,
                              EdgeWorker::start(raw_flow(), test_worker_config(db_->url(), &logs)));
  // (the 100 MB output only once, through the typed handler)
  check_outputs(*client_, *conn_, "hRaw", "pgflow: the handler's output cannot be stored: it ",
                /*big=*/false);
  EXPECT_TRUE(worker.running());
  worker.stop();
  EXPECT_THAT(worker.wait(), IsOk());
  for (const LogRecorder::Entry& e : logs.entries())
    EXPECT_LT(e.text().size(), 4096u) << "no output body in logs";
}

TEST_F(HostileInputTest, WorkerFunctionNamesAreStoredAsGivenOrRefused) {
  for (const Case* c : cases_of("function_name")) {
    SCOPED_TRACE(c->name);
    WorkerConfig config = test_worker_config(db_->url());
    config.function_name = string_value(*c);
    config.startup_timeout = std::chrono::milliseconds(0);
    const std::string before = snapshot();
    absl::StatusOr<EdgeWorker> worker = EdgeWorker::start(host, config);
    if (c->cpp_code == "OK") {
      ASSERT_THAT(worker, IsOk());
      EXPECT_EQ(sql("select count(*) from pgflow.workers w join pgflow.worker_functions f using "
                    "(function_name)"
                    " where f.function_name = $1 and w.worker_id = $2::uuid",
                    {config.function_name, worker->worker_id()}),
                "1");
      worker->stop();
      EXPECT_THAT(worker->wait(), IsOk());
      continue;
    }
    EXPECT_THAT(worker, expected(*c));
    EXPECT_EQ(snapshot(), before);
  }
}

TEST_F(HostileInputTest, HandBuiltFlowSlugsAreRefusedBeforeTheDatabase) {
  for (const Case* c : cases_of("definition")) {
    SCOPED_TRACE(c->name);
    FlowDefinition flow = raw_flow();
    flow.slug = string_value(*c);
    const std::string before = snapshot();
    EXPECT_THAT(validate(flow), expected(*c));
    EXPECT_THAT(EdgeWorker::start(flow, test_worker_config(db_->url())), expected(*c));
    EXPECT_EQ(snapshot(), before);
  }
}

// Strings that reach libpq outside the table's entry points: a NUL byte would end them early.
TEST_F(HostileInputTest, StatementsParametersAndConnectionStringsWithANulByteAreRefused) {
  const std::string before = snapshot();
  const std::string nul_param("hHost\0junk", 10);
  EXPECT_THAT(
      client_->in_transaction([&](Transaction& tx) {
        return tx.exec("select pgflow.start_run($1, '{}')", {nul_param}).status();
      }),
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          HasSubstr(
              "pgflow: statement parameter $1 contains a NUL byte (at byte 5), which PostgreSQL "
              "text cannot hold")));
  EXPECT_THAT(
      client_->in_transaction([&](Transaction& tx) {
        return tx.exec(std::string("select 1\0; delete from pgflow.runs", 34)).status();
      }),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("the statement contains a NUL byte")));
  EXPECT_EQ(snapshot(), before);
  EXPECT_THAT(
      Client::connect({.connection_string = db_->url() + std::string("\0 password=secret", 17)}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("the connection string contains a NUL byte"),
                     ::testing::Not(HasSubstr("secret")))));
}

}  // namespace
}  // namespace pgflow
