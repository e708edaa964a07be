// pgflow::shape_of against the exact upstream flow-shape JSON: key names and order, step
// order, sorted dependencies, pattern wrappers, defaults, options only when set.
#include <chrono>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "pgflow/flow.h"
#include "pgflow/flow_definition.h"
#include "testing/test_flows.h"

namespace pgflow {
namespace {

namespace flows = pgflow::testing::flows;

// Parsing into ordered_json keeps the key order as written, so comparing dumps compares
// key order too.
std::string canonical(const char* expected) {
  return nlohmann::ordered_json::parse(expected).dump();
}

TEST(FlowShape, ArchitectureSketch) {
  EXPECT_EQ(shape_of(flows::onboarding).dump(), canonical(R"({
    "steps": [
      {"slug": "profile", "stepType": "single", "dependencies": [],
       "whenUnmet": "skip", "whenExhausted": "fail",
       "requiredInputPattern": {"defined": false}, "forbiddenInputPattern": {"defined": false}},
      {"slug": "friends", "stepType": "single", "dependencies": ["profile"],
       "whenUnmet": "skip", "whenExhausted": "fail",
       "requiredInputPattern": {"defined": false}, "forbiddenInputPattern": {"defined": false}},
      {"slug": "notifyAll", "stepType": "map", "dependencies": ["friends"],
       "whenUnmet": "skip", "whenExhausted": "fail",
       "requiredInputPattern": {"defined": false}, "forbiddenInputPattern": {"defined": false}},
      {"slug": "gift", "stepType": "single", "dependencies": ["profile"],
       "whenUnmet": "skip", "whenExhausted": "fail",
       "requiredInputPattern": {"defined": true, "value": {"profile": {"vip": true}}},
       "forbiddenInputPattern": {"defined": false}},
      {"slug": "report", "stepType": "single", "dependencies": ["gift", "notifyAll"],
       "whenUnmet": "skip", "whenExhausted": "fail",
       "requiredInputPattern": {"defined": false}, "forbiddenInputPattern": {"defined": false}}
    ],
    "options": {"maxAttempts": 3, "timeout": 30}
  })"));
}

TEST(FlowShape, RootAndDependentMaps) {
  EXPECT_EQ(shape_of(flows::maps).dump(), canonical(R"({
    "steps": [
      {"slug": "double", "stepType": "map", "dependencies": [],
       "whenUnmet": "skip", "whenExhausted": "fail",
       "requiredInputPattern": {"defined": false}, "forbiddenInputPattern": {"defined": false},
       "options": {"maxAttempts": 5}},
      {"slug": "label", "stepType": "map", "dependencies": ["double"],
       "whenUnmet": "skip", "whenExhausted": "fail",
       "requiredInputPattern": {"defined": false}, "forbiddenInputPattern": {"defined": false}},
      {"slug": "count", "stepType": "single", "dependencies": ["label"],
       "whenUnmet": "skip", "whenExhausted": "fail",
       "requiredInputPattern": {"defined": false}, "forbiddenInputPattern": {"defined": false}}
    ]
  })"));
}

TEST(FlowShape, ConditionsAndModes) {
  EXPECT_EQ(shape_of(flows::conditions).dump(), canonical(R"({
    "steps": [
      {"slug": "check", "stepType": "single", "dependencies": [],
       "whenUnmet": "fail", "whenExhausted": "fail",
       "requiredInputPattern": {"defined": true, "value": {"kind": "order"}},
       "forbiddenInputPattern": {"defined": false}},
      {"slug": "maybe", "stepType": "single", "dependencies": ["check"],
       "whenUnmet": "skip", "whenExhausted": "fail",
       "requiredInputPattern": {"defined": false},
       "forbiddenInputPattern": {"defined": true, "value": {"check": {"test": true}}}},
      {"slug": "cascade", "stepType": "single", "dependencies": ["check"],
       "whenUnmet": "skip-cascade", "whenExhausted": "fail",
       "requiredInputPattern": {"defined": true, "value": {"check": {"kind": "order"}}},
       "forbiddenInputPattern": {"defined": true, "value": {"check": {"cancelled": true}}}},
      {"slug": "fragile", "stepType": "single", "dependencies": ["check"],
       "whenUnmet": "skip", "whenExhausted": "skip",
       "requiredInputPattern": {"defined": false}, "forbiddenInputPattern": {"defined": false}},
      {"slug": "final", "stepType": "single", "dependencies": ["cascade", "fragile", "maybe"],
       "whenUnmet": "skip", "whenExhausted": "skip-cascade",
       "requiredInputPattern": {"defined": false}, "forbiddenInputPattern": {"defined": false}}
    ]
  })"));
}

TEST(FlowShape, OptionsOnlyWhenSetAndOnlySetKeys) {
  EXPECT_EQ(shape_of(flows::options).dump(), canonical(R"({
    "steps": [
      {"slug": "fast", "stepType": "single", "dependencies": [],
       "whenUnmet": "skip", "whenExhausted": "fail",
       "requiredInputPattern": {"defined": false}, "forbiddenInputPattern": {"defined": false},
       "options": {"maxAttempts": 1, "baseDelay": 1, "timeout": 3, "startDelay": 0}},
      {"slug": "slow", "stepType": "single", "dependencies": ["fast"],
       "whenUnmet": "skip", "whenExhausted": "fail",
       "requiredInputPattern": {"defined": false}, "forbiddenInputPattern": {"defined": false},
       "options": {"timeout": 600, "startDelay": 30}},
      {"slug": "plain", "stepType": "single", "dependencies": ["slow"],
       "whenUnmet": "skip", "whenExhausted": "fail",
       "requiredInputPattern": {"defined": false}, "forbiddenInputPattern": {"defined": false}}
    ],
    "options": {"maxAttempts": 4, "baseDelay": 2, "timeout": 90}
  })"));
}

TEST(FlowShape, DependenciesSortByteOrderButDefinitionKeepsDeclarationOrder) {
  const nlohmann::ordered_json shape = shape_of(flows::sorted_deps);
  EXPECT_EQ(shape["steps"][3]["dependencies"].dump(), R"(["Zeta","alpha","mid"])");
  EXPECT_EQ(flows::sorted_deps.definition().steps[3].dependencies,
            (std::vector<std::string>{"mid", "alpha", "Zeta"}));
  EXPECT_FALSE(shape.contains("options"));
}

TEST(FlowShape, EmptyFlow) { EXPECT_EQ(shape_of(flows::empty).dump(), R"({"steps":[]})"); }

TEST(FlowShape, RuntimeOptionValuesAppearAsGiven) {
  const int configured = 45;
  const auto flow =
      Flow<"runtimeOptions", int>({.timeout = runtime(configured)})
          .step<"only">({.start_delay = runtime(configured / 3)}, [](int x) { return x; });
  const nlohmann::ordered_json shape = shape_of(flow);
  EXPECT_EQ(shape["options"].dump(), R"({"timeout":45})");
  EXPECT_EQ(shape["steps"][0]["options"].dump(), R"({"startDelay":15})");
}

TEST(FlowShape, DurationOptionsAreWholeSeconds) {
  using namespace std::chrono_literals;
  const std::chrono::seconds configured = std::chrono::minutes(2);
  const auto flow =
      Flow<"durationOptions", int>({.base_delay = 2s, .timeout = std::chrono::minutes(1)})
          .step<"only">({.timeout = runtime(configured), .start_delay = 0s},
                        [](int x) { return x; });
  const nlohmann::ordered_json shape = shape_of(flow);
  EXPECT_EQ(shape["options"].dump(), R"({"baseDelay":2,"timeout":60})");
  EXPECT_EQ(shape["steps"][0]["options"].dump(), R"({"timeout":120,"startDelay":0})");
}

// A duration beyond the SQL core's int saturates: 2^32 + 10 s is not taken as 10 s.
TEST(FlowShape, ADurationBeyondTheIntRangeSaturates) {
  const std::chrono::seconds configured((1LL << 32) + 10);
  const auto flow =
      Flow<"hugeOptions", int>({.timeout = runtime(configured)})
          .step<"only">({.start_delay = runtime(-configured)}, [](int x) { return x; });
  const nlohmann::ordered_json shape = shape_of(flow);
  EXPECT_EQ(shape["options"]["timeout"], std::numeric_limits<int>::max());
  EXPECT_EQ(shape["steps"][0]["options"]["startDelay"], std::numeric_limits<int>::min());
}

TEST(FlowShape, ConcurrencyLimitsAreFlowControlNotShape) {
  const auto flow = Flow<"limited", int>({.max_attempts = 2, .concurrency_limit = 10})
                        .step<"fetch">({.concurrency_limit = 3}, [](int x) { return x; })
                        .step<"save">(after<"fetch">, {.timeout = 5}, [](int x) { return x; })
                        .step<"audit">({.concurrency_limit = runtime(1)}, [](int x) { return x; });
  const nlohmann::ordered_json shape = shape_of(flow);
  EXPECT_EQ(shape["options"].dump(), R"({"maxAttempts":2})");
  EXPECT_FALSE(shape["steps"][0].contains("options"));
  EXPECT_EQ(shape["steps"][1]["options"].dump(), R"({"timeout":5})");
  EXPECT_EQ(flow_control_of(flow.definition()).dump(), canonical(R"({"concurrencyLimit": 10,
                          "steps": {"fetch": {"concurrencyLimit": 3},
                                    "audit": {"concurrencyLimit": 1}}})"));
}

TEST(FlowShape, ConcurrencyKeysAreFlowControlWithPathsAsFieldNameArrays) {
  const auto flow =
      Flow<"keyed", int>(
          {.concurrency_limit = 10,
           .concurrency_key = {.path = "tenant", .limit = 3, .weight = "plan.weight"}})
          .step<"fetch">({.concurrency_key = {.path = "account.id"}}, [](int x) { return x; })
          .step<"save">(after<"fetch">, {.concurrency_limit = 2}, [](int x) { return x; });
  EXPECT_FALSE(shape_of(flow).contains("options"));
  EXPECT_EQ(flow_control_of(flow.definition()).dump(), canonical(R"({"concurrencyLimit": 10,
      "concurrencyKey": {"path": ["tenant"], "limit": 3, "weightPath": ["plan", "weight"]},
      "steps": {"fetch": {"concurrencyKey": {"path": ["account", "id"]}},
                "save": {"concurrencyLimit": 2}}})"));
  EXPECT_TRUE(validate(flow).ok());
}

TEST(FlowShape, FlowsWithoutLimitsHaveEmptyFlowControl) {
  EXPECT_EQ(flow_control_of(flows::onboarding.definition()).dump(), "{}");
  const auto step_only =
      Flow<"stepOnly", int>().step<"a">({.concurrency_limit = 2}, [](int x) { return x; });
  EXPECT_EQ(flow_control_of(step_only.definition()).dump(),
            R"({"steps":{"a":{"concurrencyLimit":2}}})");
}

TEST(FlowShape, HandBuiltDefinition) {
  FlowDefinition def;
  def.slug = "handBuilt";
  def.options.base_delay = std::chrono::seconds(7);
  StepDefinition a;
  a.slug = "a";
  StepDefinition b;
  b.slug = "b";
  b.type = StepType::kMap;
  b.dependencies = {"a"};
  b.when_exhausted = WhenMode::kSkipCascade;
  b.if_not_pattern = nlohmann::json{{"a", nullptr}};
  def.steps = {a, b};
  EXPECT_EQ(shape_of(def).dump(), canonical(R"({
    "steps": [
      {"slug": "a", "stepType": "single", "dependencies": [],
       "whenUnmet": "skip", "whenExhausted": "fail",
       "requiredInputPattern": {"defined": false}, "forbiddenInputPattern": {"defined": false}},
      {"slug": "b", "stepType": "map", "dependencies": ["a"],
       "whenUnmet": "skip", "whenExhausted": "skip-cascade",
       "requiredInputPattern": {"defined": false},
       "forbiddenInputPattern": {"defined": true, "value": {"a": null}}}
    ],
    "options": {"baseDelay": 7}
  })"));
}

TEST(FlowShape, TypedFlowAndItsDefinitionAgree) {
  EXPECT_EQ(shape_of(flows::onboarding), shape_of(flows::onboarding.definition()));
  EXPECT_EQ(flows::onboarding.definition().slug, "onboardUser");
  ASSERT_NE(flows::onboarding.definition().find("gift"), nullptr);
  EXPECT_EQ(flows::onboarding.definition().find("gift")->when_unmet, WhenMode::kSkip);
  EXPECT_EQ(flows::onboarding.definition().find("missing"), nullptr);
}

TEST(FlowShape, WaitStepsHaveAWaitKeyLastAndNoOtherStepHasOne) {
  using namespace std::chrono_literals;
  const auto flow = Flow<"waits", int>()
                        .step<"draft">([](int x) { return x; })
                        .signal<"approve", int>(after<"draft">, signal_timeout(1h, 0))
                        .signal<"answer", int>(after<"draft">, signal_timeout(60s))
                        .sleep<"nap">(after<"draft">, sleep_for(0s))
                        .sleep<"shipDay">(after<"draft">, sleep_until("draft.at"));
  const nlohmann::ordered_json shape = shape_of(flow);
  EXPECT_FALSE(shape["steps"][0].contains("wait")) << "a step with a handler: upstream's shape";
  EXPECT_EQ(shape["steps"][1].dump(),
            canonical(R"({"slug":"approve","stepType":"single","dependencies":["draft"],
                          "whenUnmet":"skip","whenExhausted":"fail",
                          "requiredInputPattern":{"defined":false},
                          "forbiddenInputPattern":{"defined":false},
                          "wait":{"kind":"signal","timeout":3600,"timeoutOutput":0}})"));
  EXPECT_EQ(shape["steps"][2]["wait"].dump(), R"({"kind":"signal","timeout":60})");
  EXPECT_EQ(shape["steps"][3]["wait"].dump(), R"({"kind":"sleep","seconds":0})");
  EXPECT_EQ(shape["steps"][4]["wait"].dump(), R"({"kind":"sleep","until":["draft","at"]})");
  EXPECT_FALSE(flow.definition().steps[1].handler) << "a wait step has no handler";
  EXPECT_EQ(shape_of(flows::onboarding).dump().find("wait"), std::string::npos)
      << "flows without waits keep upstream's shape";
}

// A timed-out wait completes with its value as the step's output type, unchanged. For a
// nlohmann::json output, braces made any value a one-element array ([false]), and for a vector
// of json a nested one.
TEST(FlowShape, ATimeoutValueIsStoredAsItIs) {
  using namespace std::chrono_literals;
  const nlohmann::json refusal = {{"approved", false}};
  const auto flow =
      Flow<"jsonWaits", int>()
          .step<"draft">([](int x) { return x; })
          .signal<"object", nlohmann::json>(after<"draft">, signal_timeout(1h, refusal))
          .signal<"flag", nlohmann::json>(after<"draft">, signal_timeout(1h, false))
          .signal<"list", std::vector<nlohmann::json>>(
              after<"draft">, signal_timeout(1h, std::vector<nlohmann::json>{1, "a"}))
          .signal<"count", long>(after<"draft">, signal_timeout(1h, 7))
          .signal<"none", std::vector<nlohmann::json>>(
              after<"draft">, signal_timeout(1h, std::vector<nlohmann::json>{}))
          .signal<"label", std::string>(after<"draft">, signal_timeout(1h, "none"));
  const nlohmann::ordered_json shape = shape_of(flow);
  EXPECT_EQ(shape["steps"][1]["wait"]["timeoutOutput"].dump(), R"({"approved":false})");
  EXPECT_EQ(shape["steps"][2]["wait"]["timeoutOutput"].dump(), "false");
  EXPECT_EQ(shape["steps"][3]["wait"]["timeoutOutput"].dump(), R"([1,"a"])");
  EXPECT_EQ(shape["steps"][4]["wait"]["timeoutOutput"].dump(), "7");
  EXPECT_EQ(shape["steps"][5]["wait"]["timeoutOutput"].dump(), "[]");
  EXPECT_EQ(shape["steps"][6]["wait"]["timeoutOutput"].dump(), R"("none")");
}

}  // namespace
}  // namespace pgflow
