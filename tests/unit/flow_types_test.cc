// Type-level behaviour of typed flows: inference of handler inputs and step outputs, skip
// modes, and the type utilities FlowInput, StepOutput, FlowOutput and step_slugs.
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "pgflow/flow.h"
#include "testing/test_flows.h"

namespace pgflow {
namespace {

using ::nlohmann::literals::operator""_json;
namespace flows = pgflow::testing::flows;
using Onboarding = decltype(flows::onboarding);

// ---- FlowInput / StepOutput ----
static_assert(std::is_same_v<FlowInput<Onboarding>, flows::Signup>);
static_assert(std::is_same_v<StepOutput<Onboarding, "profile">, flows::Profile>);
static_assert(std::is_same_v<StepOutput<Onboarding, "friends">, std::vector<flows::Friend>>);
static_assert(
    std::is_same_v<StepOutput<Onboarding, "notifyAll">, std::vector<std::string>>);  // map: vector
static_assert(std::is_same_v<StepOutput<Onboarding, "report">, flows::Sent>);
static_assert(std::is_same_v<StepOutput<decltype(flows::maps), "double">, std::vector<int>>);
static_assert(std::is_same_v<FlowInput<decltype(flows::maps)>, std::vector<int>>);

// void / Status results are JSON null; StatusOr<T> is T.
const auto kinds = Flow<"kinds", int>()
                       .step<"v">([](int) {})
                       .step<"s">([](int) { return absl::OkStatus(); })
                       .step<"so">([](int) -> absl::StatusOr<std::string> { return "x"; })
                       .step<"ref">([](int) -> const std::string& {
                         static const std::string kText = "text";
                         return kText;
                       });
static_assert(std::is_same_v<StepOutput<decltype(kinds), "v">, std::nullptr_t>);
static_assert(std::is_same_v<StepOutput<decltype(kinds), "s">, std::nullptr_t>);
static_assert(std::is_same_v<StepOutput<decltype(kinds), "so">, std::string>);
static_assert(std::is_same_v<StepOutput<decltype(kinds), "ref">, std::string>);

// ---- step_slugs ----
static_assert(step_slugs<Onboarding>.size() == 5);
static_assert(step_slugs<Onboarding>[0] == "profile");
static_assert(step_slugs<Onboarding>[4] == "report");
static_assert(Onboarding::slug() == "onboardUser");
static_assert(step_slugs<decltype(flows::empty)>.empty());

// ---- skip modes ----
template <typename F, detail::FixedString S>
constexpr detail::SkipTraits skip_of =
    detail::FlowTypeAccess::step_named<std::remove_cvref_t<F>, S>::skip;

const auto modes =
    Flow<"modes", nlohmann::json>()
        .step<"plain">([](const nlohmann::json&) { return 1; })
        .step<"cond">(when({{"a", 1}}),
                      [](const nlohmann::json&) { return 1; })  // default unmet: skip
        .step<"condFail">(when({{"a", 1}}), when_unmet_fail,
                          [](const nlohmann::json&) { return 1; })
        .step<"condCascade">(unless({{"a", 1}}), when_unmet_skip_cascade,
                             [](const nlohmann::json&) { return 1; })
        .step<"exhSkip">(when_exhausted_skip, [](const nlohmann::json&) { return 1; })
        .step<"exhCascade">(when_exhausted_skip_cascade, [](const nlohmann::json&) { return 1; })
        .step<"failThenSkip">(when({{"a", 1}}), when_unmet_fail, when_exhausted_skip,
                              [](const nlohmann::json&) { return 1; })
        // Upstream's rule 7 would call this one skip-cascade only; its handler failing skips it
        // without cascade, so dependents do run without it: it arrives as std::optional.
        .step<"cascadeOrSkip">(when({{"a", 1}}), when_unmet_skip_cascade, when_exhausted_skip,
                               [](const nlohmann::json&) { return 1; })
        .step<"belowCascade">(after<"condCascade">, [](int x) { return x; })
        .step<"all">(after<"plain", "cond", "condFail", "condCascade", "exhSkip", "exhCascade",
                           "failThenSkip", "cascadeOrSkip", "belowCascade">,
                     [](int, std::optional<int>, int, int, std::optional<int>, int,
                        std::optional<int>, std::optional<int>, int) { return 0; });

static_assert(!skip_of<decltype(modes), "plain">.arrives_optional);
static_assert(!skip_of<decltype(modes), "plain">.may_be_absent);
static_assert(skip_of<decltype(modes), "cond">.arrives_optional);
static_assert(!skip_of<decltype(modes), "condFail">.may_be_absent);
static_assert(!skip_of<decltype(modes), "condCascade">.arrives_optional);
static_assert(skip_of<decltype(modes), "condCascade">.may_cascade);
static_assert(skip_of<decltype(modes), "exhSkip">.arrives_optional);
static_assert(!skip_of<decltype(modes), "exhCascade">.arrives_optional);
static_assert(skip_of<decltype(modes), "failThenSkip">.arrives_optional);
static_assert(skip_of<decltype(modes), "cascadeOrSkip">.arrives_optional);
static_assert(skip_of<decltype(modes), "cascadeOrSkip">.may_cascade);
// A dependent of a skip-cascade step is skipped with it: present for its own dependents, but
// possibly absent from the run output.
static_assert(!skip_of<decltype(modes), "belowCascade">.arrives_optional);
static_assert(skip_of<decltype(modes), "belowCascade">.may_cascade);
static_assert(skip_of<decltype(modes), "belowCascade">.may_be_absent);

TEST(FlowTypes, ModesReachTheShape) {
  const nlohmann::ordered_json shape = shape_of(modes);
  EXPECT_EQ(shape["steps"][1]["whenUnmet"], "skip");
  EXPECT_EQ(shape["steps"][2]["whenUnmet"], "fail");
  EXPECT_EQ(shape["steps"][3]["whenUnmet"], "skip-cascade");
  EXPECT_EQ(shape["steps"][4]["whenExhausted"], "skip");
  EXPECT_EQ(shape["steps"][5]["whenExhausted"], "skip-cascade");
  EXPECT_EQ(shape["steps"][7]["whenUnmet"], "skip-cascade");
  EXPECT_EQ(shape["steps"][7]["whenExhausted"], "skip");
}

// ---- FlowOutput: leaf steps, optional when they may be skipped ----
using OnboardingOutput = FlowOutput<Onboarding>;
static_assert(OnboardingOutput::size == 1);  // only "report" is a leaf
static_assert(
    std::is_same_v<std::remove_cvref_t<decltype(std::declval<OnboardingOutput>().get<"report">())>,
                   flows::Sent>);

const auto leaves =
    Flow<"leaves", int>()
        .step<"root">([](int x) { return x; })
        .step<"cascader">(after<"root">, when_exhausted_skip_cascade, [](int x) { return x; })
        .step<"under">(after<"cascader">, [](int x) { return std::to_string(x); })
        .step<"maybe">(after<"root">, when_exhausted_skip, [](int x) { return x > 0; })
        .step<"solid">(after<"root">, [](int x) { return x * 2; });
using LeavesOutput = FlowOutput<decltype(leaves)>;
static_assert(LeavesOutput::size == 3);
static_assert(
    std::is_same_v<std::remove_cvref_t<decltype(std::declval<LeavesOutput>().get<"under">())>,
                   std::optional<std::string>>);
static_assert(
    std::is_same_v<std::remove_cvref_t<decltype(std::declval<LeavesOutput>().get<"maybe">())>,
                   std::optional<bool>>);
static_assert(std::is_same_v<
              std::remove_cvref_t<decltype(std::declval<LeavesOutput>().get<"solid">())>, int>);

TEST(FlowTypes, FlowOutputReadsARunOutput) {
  const LeavesOutput full = R"({"under": "4", "maybe": true, "solid": 8})"_json;
  EXPECT_EQ(full.get<"under">(), "4");
  EXPECT_EQ(full.get<"maybe">(), true);
  EXPECT_EQ(full.get<"solid">(), 8);

  // Skipped leaves are absent from the run output.
  const LeavesOutput partial = R"({"solid": 8})"_json;
  EXPECT_FALSE(partial.get<"under">().has_value());
  EXPECT_FALSE(partial.get<"maybe">().has_value());
  EXPECT_EQ(nlohmann::json(partial), R"({"solid": 8})"_json);

  // A required leaf must be there.
  EXPECT_THROW((void)R"({"under": "4"})"_json.get<LeavesOutput>(), nlohmann::json::out_of_range);
}

// ---- handler shapes ----
struct Functor {
  int operator()(const std::vector<int>& xs) const { return static_cast<int>(xs.size()); }
};
int free_function(int x) { return x + 1; }

const auto shapes =
    Flow<"shapes", std::vector<int>>()
        .step<"functor">(Functor{})
        .map<"pointer">(&free_function)
        .map<"generic">([](const auto& x) { return x * 3; })
        .step<"byValue">(after<"functor">, [](int n) { return n; })
        .step<"rvalue">(after<"functor">, [](int&& n) { return n; })
        .step<"withCtx">(after<"pointer", "generic">,
                         [](const std::vector<int>& a, const std::vector<int>& b, Context&) {
                           return a.size() + b.size();
                         })
        .array<"jsonArray">(after<"functor">, [](int n) { return nlohmann::json::array({n}); })
        .map<"overJson">(over<"jsonArray">, [](const nlohmann::json& e) { return e; });
static_assert(std::is_same_v<StepOutput<decltype(shapes), "generic">, std::vector<int>>);
static_assert(std::is_same_v<StepOutput<decltype(shapes), "withCtx">, std::size_t>);
static_assert(
    std::is_same_v<StepOutput<decltype(shapes), "overJson">, std::vector<nlohmann::json>>);

TEST(FlowTypes, HandlerShapesRun) {
  Context ctx({.flow_input = nlohmann::json({1, 2, 3})});
  EXPECT_EQ(shapes.definition().find("functor")->handler(nlohmann::json::object(), ctx).value(), 3);
  EXPECT_EQ(shapes.definition().find("pointer")->handler(4, ctx).value(), 5);
  EXPECT_EQ(shapes.definition().find("generic")->handler(4, ctx).value(), 12);
  EXPECT_EQ(shapes.definition().find("rvalue")->handler(R"({"functor": 9})"_json, ctx).value(), 9);
  EXPECT_EQ(shapes.definition()
                .find("withCtx")
                ->handler(R"({"pointer": [1], "generic": [2, 3]})"_json, ctx)
                .value(),
            3);
}

TEST(FlowTypes, BuilderIsImmutable) {
  const auto base = Flow<"immutable", int>().step<"a">([](int x) { return x; });
  const auto extended = base.step<"b">(after<"a">, [](int x) { return x; });
  EXPECT_EQ(base.definition().steps.size(), 1u);
  EXPECT_EQ(extended.definition().steps.size(), 2u);
  static_assert(decltype(base)::step_count == 1 && decltype(extended)::step_count == 2);
}

}  // namespace
}  // namespace pgflow
