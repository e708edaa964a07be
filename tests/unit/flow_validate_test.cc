// pgflow::validate: runtime-only values of typed flows, and every rule for hand-built
// definitions, with messages naming flow, step and field.
#include <chrono>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "pgflow/flow.h"
#include "pgflow/flow_definition.h"
#include "testing/status_matchers.h"
#include "testing/test_flows.h"

namespace pgflow {
namespace {

using ::pgflow::testing::IsOk;
using ::pgflow::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
namespace flows = pgflow::testing::flows;

StepHandler noop() {
  return [](const nlohmann::json&, Context&) -> absl::StatusOr<nlohmann::json> { return nullptr; };
}

StepDefinition step(std::string slug, std::vector<std::string> deps = {}) {
  StepDefinition s;
  s.slug = std::move(slug);
  s.dependencies = std::move(deps);
  s.handler = noop();
  return s;
}

TEST(FlowValidate, TypedTestFlowsAreValid) {
  EXPECT_THAT(validate(flows::onboarding), IsOk());
  EXPECT_THAT(validate(flows::maps), IsOk());
  EXPECT_THAT(validate(flows::conditions), IsOk());
  EXPECT_THAT(validate(flows::options), IsOk());
  EXPECT_THAT(validate(flows::sorted_deps), IsOk());
  EXPECT_THAT(validate(flows::empty), IsOk());
}

TEST(FlowValidate, PatternsMustBeObjects) {
  const auto flow =
      Flow<"patterns", nlohmann::json>()
          .step<"a">(when(nlohmann::json::array({1, 2})), [](const nlohmann::json&) { return 1; })
          .step<"b">(unless("text"), [](const nlohmann::json&) { return 1; });
  EXPECT_THAT(
      validate(flow),
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          AllOf(HasSubstr("flow \"patterns\", step \"a\", field \"if_pattern\": must be a JSON "
                          "object, got array"),
                HasSubstr("flow \"patterns\", step \"b\", field \"if_not_pattern\": must be a "
                          "JSON object, got string"))));
}

TEST(FlowValidate, RuntimeOptionValuesAreRangeChecked) {
  const auto flow = Flow<"ranges", int>({.max_attempts = runtime(0),
                                         .base_delay = runtime(0),
                                         .timeout = runtime(2),
                                         .concurrency_limit = runtime(0)})
                        .step<"s">({.max_attempts = runtime(-1),
                                    .base_delay = runtime(0),
                                    .timeout = runtime(1),
                                    .start_delay = runtime(-5),
                                    .concurrency_limit = runtime(-2)},
                                   [](int x) { return x; });
  absl::Status status = validate(flow);
  EXPECT_THAT(
      status,
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          AllOf(
              HasSubstr("flow \"ranges\", field \"max_attempts\": must be at least 1, got 0"),
              HasSubstr("flow \"ranges\", field \"base_delay\": must be at least 1 second"),
              HasSubstr("flow \"ranges\", field \"timeout\": must be at least 3 seconds, got 2"),
              HasSubstr("step \"s\", field \"max_attempts\": must be at least 1, got -1"),
              HasSubstr("step \"s\", field \"base_delay\""),
              HasSubstr("step \"s\", field \"timeout\": must be at least 3 seconds, got 1"),
              HasSubstr("step \"s\", field \"start_delay\": must be at least 0 seconds, got -5"),
              HasSubstr("flow \"ranges\", field \"concurrency_limit\": must be at least 1, got 0"),
              HasSubstr("step \"s\", field \"concurrency_limit\": must be at least 1, got -2"))));
}

TEST(FlowValidate, ConcurrencyKeysNeedALimitAndWellFormedPaths) {
  const auto flow =
      Flow<"keys", int>({.concurrency_key = {.path = runtime("tenant..id"), .limit = runtime(0)}})
          .step<"s">({.concurrency_key = {.path = "tenant", .weight = runtime(".w")}},
                     [](int x) { return x; })
          .step<"t">({.concurrency_key = {.limit = 2}}, [](int x) { return x; });
  EXPECT_THAT(
      validate(flow),
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          AllOf(HasSubstr("flow \"keys\", field \"concurrency_key.path\": must be dotted field "
                          "names of the run input such as \"tenant\", got \"tenant..id\""),
                HasSubstr("flow \"keys\", field \"concurrency_key.limit\": must be at least 1, "
                          "got 0"),
                HasSubstr("flow \"keys\", field \"concurrency_key\": shares a concurrency "
                          "limit, and neither the flow nor any of its steps has one"),
                HasSubstr("step \"s\", field \"concurrency_key.weight\": must be dotted field "
                          "names of the run input such as \"plan.weight\", got \".w\""),
                HasSubstr("step \"s\", field \"concurrency_key\": shares a concurrency limit, "
                          "and neither the step nor the flow has one"),
                HasSubstr("step \"t\", field \"concurrency_key.path\": must be dotted field "
                          "names of the run input such as \"tenant\", got \"\""))));
}

TEST(FlowValidate, BoundaryValuesAreValid) {
  FlowDefinition def;
  def.slug = "bounds";
  using std::chrono::seconds;
  def.options = {
      .max_attempts = 1, .base_delay = seconds(1), .timeout = seconds(3), .concurrency_limit = 1};
  def.steps = {step("s")};
  def.steps[0].options = {.max_attempts = 1,
                          .base_delay = seconds(1),
                          .timeout = seconds(3),
                          .start_delay = seconds(0),
                          .concurrency_limit = 1};
  EXPECT_THAT(validate(def), IsOk());
}

TEST(FlowValidate, HandBuiltSlugRules) {
  FlowDefinition def;
  def.slug = "bad-flow";
  def.steps = {step("ok"), step("2fast"), step("OK"), step("ok"), step("x__y")};
  EXPECT_THAT(
      validate(def),
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          AllOf(HasSubstr("flow \"bad-flow\", field \"slug\": a slug can contain only ASCII"),
                HasSubstr("step \"2fast\", field \"slug\": a slug must start with a letter"),
                HasSubstr(
                    "step \"OK\", field \"slug\": differs from step \"ok\" only in letter case"),
                HasSubstr("step \"ok\", field \"slug\": another step already has this slug"),
                HasSubstr("step \"x__y\", field \"slug\": a slug cannot contain '__'"))));
}

TEST(FlowValidate, FlowSlugQueueLengthLimit) {
  FlowDefinition def;
  def.slug = std::string(47, 'q');
  EXPECT_THAT(validate(def), IsOk());
  def.slug = std::string(48, 'q');
  EXPECT_THAT(validate(def), StatusIs(absl::StatusCode::kInvalidArgument,
                                      HasSubstr("a flow slug can be at most 47 characters")));
}

TEST(FlowValidate, HandBuiltDependencyRules) {
  FlowDefinition def;
  def.slug = "deps";
  def.steps = {step("a", {"later"}), step("b", {"a", "a"}), step("later"), step("m", {"a", "b"})};
  def.steps[3].type = StepType::kMap;
  def.steps[2].handler = nullptr;
  EXPECT_THAT(
      validate(def),
      StatusIs(
          absl::StatusCode::kInvalidArgument,
          AllOf(HasSubstr("step \"a\", field \"dependencies\": \"later\" is not a step defined "
                          "before this one"),
                HasSubstr("step \"b\", field \"dependencies\": \"a\" is listed twice"),
                HasSubstr("step \"m\", field \"dependencies\": a map step has at most one "
                          "dependency"),
                HasSubstr("step \"later\", field \"handler\": is not set"))));
}

TEST(FlowValidate, SelfDependencyIsNotEarlier) {
  FlowDefinition def;
  def.slug = "selfish";
  def.steps = {step("me", {"me"})};
  EXPECT_THAT(validate(def), StatusIs(absl::StatusCode::kInvalidArgument,
                                      HasSubstr("\"me\" is not a step defined")));
  def.steps = {step("me")};
  EXPECT_THAT(validate(def), IsOk());  // without the self-dependency it is valid
}

// Patterns and a timeout's value go to the database in the shape's JSON: a value JSON cannot
// carry as it is (NaN would be written as null, changing the condition; invalid UTF-8 would
// throw at deployment) is a problem naming the step and field.
TEST(FlowValidate, PatternsAndTimeoutValuesMustBeJsonAsTheyAre) {
  FlowDefinition def;
  def.slug = "patterns";
  StepDefinition nan = step("nan");
  nan.if_pattern = nlohmann::json{{"score", std::numeric_limits<double>::quiet_NaN()}};
  def.steps.push_back(nan);
  StepDefinition bad_text = step("badText");
  bad_text.if_not_pattern = nlohmann::json{{"name", std::string("\xff")}};
  def.steps.push_back(bad_text);
  StepDefinition wait = step("wait", {"nan"});
  wait.handler = nullptr;
  wait.wait =
      WaitDefinition{.kind = WaitDefinition::Kind::kSignal,
                     .timeout = std::chrono::seconds(5),
                     .timeout_output = nlohmann::json(std::numeric_limits<double>::infinity())};
  def.steps.push_back(wait);
  EXPECT_THAT(validate(def),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("step \"nan\", field \"if_pattern\": holds NaN"),
                             HasSubstr("step \"badText\", field \"if_not_pattern\": holds a "
                                       "string that is not valid UTF-8"),
                             HasSubstr("step \"wait\", field \"wait.timeout_output\": holds "
                                       "Infinity"))));
}

TEST(FlowValidate, HandBuiltWaitStepsFollowTheWaitRules) {
  using namespace std::chrono_literals;
  FlowDefinition def;
  def.slug = "waits";
  def.steps.push_back(step("draft"));
  auto wait_step = [](std::string slug, WaitDefinition wait) {
    StepDefinition s = step(std::move(slug), {"draft"});
    s.handler = nullptr;
    s.wait = std::move(wait);
    return s;
  };
  def.steps.push_back(wait_step("ok", {.kind = WaitDefinition::Kind::kSignal, .timeout = 5s}));
  EXPECT_THAT(validate(def), IsOk()) << "a wait step needs no handler";

  def.steps.push_back(wait_step("zeroTimeout", {.timeout = 0s}));
  def.steps.push_back(wait_step("outputWithoutTimeout", {.timeout_output = nlohmann::json(1)}));
  def.steps.push_back(wait_step("sleepNeither", {.kind = WaitDefinition::Kind::kSleep}));
  def.steps.push_back(wait_step(
      "sleepBoth",
      {.kind = WaitDefinition::Kind::kSleep, .sleep_for = 1s, .sleep_until = {"draft", "at"}}));
  StepDefinition with_handler = wait_step("withHandler", {});
  with_handler.handler = noop();
  with_handler.options.max_attempts = 3;
  def.steps.push_back(with_handler);
  StepDefinition map_until =
      wait_step("mapUntil", {.kind = WaitDefinition::Kind::kSleep, .sleep_until = {"draft", ""}});
  map_until.type = StepType::kMap;
  def.steps.push_back(map_until);
  // Beyond the SQL core's int (which would refuse it at deployment).
  def.steps.push_back(wait_step("hugeTimeout", {.kind = WaitDefinition::Kind::kSignal,
                                                .timeout = std::chrono::seconds(3'600'000'000)}));
  def.steps.push_back(wait_step("hugeSleep", {.kind = WaitDefinition::Kind::kSleep,
                                              .sleep_for = std::chrono::hours(1'000'000)}));
  EXPECT_THAT(
      validate(def),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("step \"zeroTimeout\", field \"wait.timeout\": must be at least 1 "
                               "second, got 0"),
                     HasSubstr("step \"outputWithoutTimeout\", field \"wait.timeout_output\": "
                               "needs a wait.timeout"),
                     HasSubstr("step \"sleepNeither\", field \"wait\": a sleep needs exactly one "
                               "of sleep_for and sleep_until"),
                     HasSubstr("step \"sleepBoth\", field \"wait\": a sleep needs exactly one"),
                     HasSubstr("step \"withHandler\", field \"handler\": a wait step has no "
                               "handler"),
                     HasSubstr("step \"withHandler\", field \"options\": a wait step takes no "
                               "options"),
                     HasSubstr("step \"mapUntil\", field \"wait.sleep_until\": must be field "
                               "names"),
                     HasSubstr("step \"mapUntil\", field \"wait.sleep_until\": a map step "
                               "sleeps for sleep_for"),
                     HasSubstr("step \"hugeTimeout\", field \"wait.timeout\": must be at most "
                               "2147483647 seconds (about 68 years), got 3600000000"),
                     HasSubstr("step \"hugeSleep\", field \"wait.sleep_for\": must be at most "
                               "2147483647 seconds"))));
}

}  // namespace
}  // namespace pgflow
