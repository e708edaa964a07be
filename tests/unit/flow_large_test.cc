// A 30-step flow: the compile-time cost of the DSL must stay small (a few seconds for this
// file), and the shape and handlers of a long chain with fan-in, maps and conditions work.
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "pgflow/flow.h"
#include "testing/large_flow.h"

namespace pgflow {
namespace {

const auto& large = pgflow::testing::large::flow;

static_assert(decltype(pgflow::testing::large::flow)::step_count == 30);
static_assert(step_slugs<decltype(pgflow::testing::large::flow)>[29] == "s30");

TEST(FlowLarge, ThirtyStepsShape) {
  const nlohmann::ordered_json shape = shape_of(large);
  ASSERT_EQ(shape["steps"].size(), 30u);
  EXPECT_EQ(shape["steps"][0]["slug"], "s01");
  EXPECT_EQ(shape["steps"][29]["slug"], "s30");
  EXPECT_EQ(shape["options"].dump(), R"({"maxAttempts":2})");
  for (const auto& step : shape["steps"]) {
    for (const auto& dep : step["dependencies"]) {
      EXPECT_LT(dep.get<std::string>(), step["slug"].get<std::string>()) << "declared before";
    }
  }
  EXPECT_TRUE(validate(large).ok()) << validate(large);
}

TEST(FlowLarge, HandlersOfTheLastSteps) {
  Context ctx({.flow_input = nlohmann::json{{"id", "o1"}, {"lines", {1, 2, 3}}}});
  const FlowDefinition& def = large.definition();
  EXPECT_EQ(def.find("s01")->handler(nlohmann::json::object(), ctx).value(), 3);
  EXPECT_EQ(def.find("s28")->handler(5, ctx).value(), 140);
  EXPECT_EQ(def.find("s26")->handler(nlohmann::json{{"s25", 4}, {"s24", 3}}, ctx).value(), 7);
  EXPECT_EQ(def.find("s26")->handler(nlohmann::json{{"s24", 3}}, ctx).value(), 3);
}

}  // namespace
}  // namespace pgflow
