// RunState as the client reads it from pgflow.get_run_with_states: typed statuses, skip
// reasons and times, and a clear error for values this library does not know.
#include "pgflow/run_state.h"

#include <sstream>

#include "client/run_state_json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "internal/timestamps.h"
#include "testing/status_matchers.h"

namespace pgflow {
namespace {

using pgflow::testing::IsOk;
using pgflow::testing::StatusIs;
using ::testing::HasSubstr;

nlohmann::json run_json() {
  return nlohmann::json::parse(R"({
    "run": {"run_id": "8f4e2a1c-0000-4000-8000-000000000001", "flow_slug": "greetV2", "status": "completed",
            "input": {"x": 1}, "output": {"b": 2}, "remaining_steps": 0,
            "started_at": "2026-12-01T14:16:38.5+00:00", "completed_at": "2026-12-01T15:16:39+01:00",
            "failed_at": null},
    "flow_alias": "greet",
    "steps": [
      {"step_slug": "a", "status": "completed", "output": 1, "remaining_deps": 0,
       "started_at": "2026-12-01T14:16:38.500001+00:00", "completed_at": "2026-12-01T14:16:38.75+00:00"},
      {"step_slug": "b", "status": "skipped", "skip_reason": "dependency_skipped", "remaining_deps": 1,
       "skipped_at": "2026-12-01T09:16:38-05:00"}
    ]})");
}

TEST(RunState, ParsesTypedStatusesReasonsAndTimes) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState run, internal::run_state_from_json(run_json()));
  EXPECT_EQ(run.status, RunStatus::kCompleted);
  EXPECT_TRUE(run.finished());
  EXPECT_FALSE(run.cancelled());
  EXPECT_EQ(run.flow_alias, "greet");
  const absl::Time started =
      absl::FromCivil(absl::CivilSecond(2026, 12, 1, 14, 16, 38), absl::UTCTimeZone()) +
      absl::Milliseconds(500);
  EXPECT_EQ(run.started_at, started);
  ASSERT_TRUE(run.completed_at.has_value());
  EXPECT_EQ(*run.completed_at - run.started_at, absl::Milliseconds(500))
      << "the +01:00 offset is applied";
  EXPECT_FALSE(run.failed_at.has_value());

  ASSERT_EQ(run.steps.size(), 2u);
  EXPECT_EQ(run.steps[0].status, StepStatus::kCompleted);
  EXPECT_EQ(*run.steps[0].started_at - run.started_at, absl::Microseconds(1))
      << "microseconds are kept";
  EXPECT_EQ(run.step("b")->status, StepStatus::kSkipped);
  EXPECT_EQ(run.step("b")->skip_reason, SkipReason::kDependencySkipped);
  EXPECT_EQ(*run.step("b")->skipped_at, started - absl::Milliseconds(500));
  EXPECT_EQ(run.step("nope"), nullptr);
}

TEST(RunState, UnknownStatusIsAnErrorNamingIt) {
  nlohmann::json j = run_json();
  j["run"]["status"] = "paused";
  EXPECT_THAT(internal::run_state_from_json(j).status(),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("unknown run status \"paused\"")));
  j = run_json();
  j["steps"][1]["skip_reason"] = "bored";
  EXPECT_THAT(internal::run_state_from_json(j).status(),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("unknown skip reason \"bored\"")));
}

TEST(RunState, BadTimestampIsAnErrorNamingIt) {
  nlohmann::json j = run_json();
  j["run"]["completed_at"] = "yesterday";
  EXPECT_THAT(internal::run_state_from_json(j).status(),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("\"yesterday\"")));
}

TEST(RunState, TimestampsAsPostgreSqlWritesThemInJson) {
  const absl::Time noon =
      absl::FromCivil(absl::CivilSecond(2026, 12, 1, 12, 0, 0), absl::UTCTimeZone());
  EXPECT_EQ(*internal::parse_timestamp("2026-12-01T12:00:00+00:00"), noon);
  EXPECT_EQ(*internal::parse_timestamp("2026-12-01T17:30:00.25+05:30"),
            noon + absl::Milliseconds(250));
  EXPECT_EQ(*internal::parse_timestamp("2026-12-01T08:00:00-04:00"), noon);
  EXPECT_EQ(*internal::parse_timestamp("infinity"), absl::InfiniteFuture());
  EXPECT_EQ(*internal::parse_timestamp("-infinity"), absl::InfinitePast());
  EXPECT_FALSE(internal::parse_timestamp("2026-12-01 12:00:00").ok()) << "text form, not JSON's";
}

TEST(RunState, ToStringGivesTheDatabasesWords) {
  EXPECT_EQ(to_string(RunStatus::kStarted), "started");
  EXPECT_EQ(to_string(RunStatus::kFailed), "failed");
  EXPECT_EQ(to_string(StepStatus::kCreated), "created");
  EXPECT_EQ(to_string(StepStatus::kSkipped), "skipped");
  EXPECT_EQ(to_string(SkipReason::kConditionUnmet), "condition_unmet");
  EXPECT_EQ(to_string(SkipReason::kHandlerFailed), "handler_failed");
  std::ostringstream os;
  os << RunStatus::kCompleted << " " << StepStatus::kStarted << " "
     << SkipReason::kDependencySkipped;
  EXPECT_EQ(os.str(), "completed started dependency_skipped");
}

TEST(RunState, OutputAsSaysWhyThereIsNone) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState run, internal::run_state_from_json(run_json()));
  EXPECT_EQ(*run.output_as<nlohmann::json>(), nlohmann::json({{"b", 2}}));
  EXPECT_THAT(
      run.step("b")->output_as<int>().status(),
      StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("step b has no output (skipped)")));
  EXPECT_THAT(run.output_as<std::string>().status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("does not convert")));
}

// JSON null is a completed step's output (a void handler, a signal without payload), not "no
// output"; a completed run whose leaves were all skipped has the empty record, {}.
TEST(RunState, NullOutputsOfCompletedStepsAndRunsAreValues) {
  nlohmann::json j = run_json();
  j["steps"][0]["output"] = nullptr;
  j["run"]["output"] = nullptr;
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState run, internal::run_state_from_json(j));
  EXPECT_THAT(run.step("a")->output_as<std::nullptr_t>(), IsOk());
  EXPECT_EQ(*run.step("a")->output_as<nlohmann::json>(), nlohmann::json());
  EXPECT_EQ(run.output, nlohmann::json::object());
  EXPECT_EQ(*run.output_as<nlohmann::json>(), nlohmann::json::object());
  EXPECT_FALSE(run.step("b")->output.has_value()) << "a skipped step has none";
}

}  // namespace
}  // namespace pgflow
