// DeployedFlow, without a database: define_deployed_flow keeps the exact wrapped type (a plain
// Flow or a StepQueuedFlow) with every inference, adds only the alias, and a run-time alias is
// checked by validate() before a worker touches a database.
#include "pgflow/deployed_flow.h"

#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pgflow/flow.h"
#include "pgflow/step_queued_flow.h"
#include "pgflow/worker.h"
#include "testing/status_matchers.h"

namespace pgflow {
namespace {

using pgflow::testing::IsOk;
using pgflow::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

struct Signup {
  std::string email;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Signup, email)

inline const auto greet_v2 =
    Flow<"greetUserV2", Signup>({.max_attempts = 2})
        .step<"greet">([](const Signup& s) { return "hello " + s.email; })
        .array<"letters">(
            after<"greet">,
            [](const std::string& g) { return std::vector<char>(g.begin(), g.end()); })
        .map<"upper">(over<"letters">, [](char c) { return static_cast<char>(c & ~0x20); });
inline const auto deployed = define_deployed_flow(greet_v2, {.alias = "greetUser"});
inline const auto routed = define_deployed_flow(with_step_queues(greet_v2), {.alias = "greetUser"});

using Plain = std::remove_cvref_t<decltype(greet_v2)>;
using Deployed = std::remove_cvref_t<decltype(deployed)>;
using RoutedPlain = std::remove_cvref_t<decltype(with_step_queues(greet_v2))>;
using Routed = std::remove_cvref_t<decltype(routed)>;

// The exact wrapped type, and every inference through the wrapper.
static_assert(std::is_same_v<Deployed, DeployedFlow<Plain>>);
static_assert(std::is_same_v<Deployed::flow_type, Plain>);
static_assert(std::is_same_v<Routed::flow_type, RoutedPlain>);
static_assert(std::is_same_v<FlowInput<Deployed>, Signup> &&
              std::is_same_v<FlowInput<Routed>, Signup>);
static_assert(std::is_same_v<FlowOutput<Deployed>, FlowOutput<Plain>>);
static_assert(std::is_same_v<FlowOutput<Routed>, FlowOutput<Plain>>);
static_assert(std::is_same_v<StepOutput<Deployed, "letters">, std::vector<char>>);
static_assert(std::is_same_v<StepOutput<Routed, "upper">, std::vector<char>>);
static_assert(step_slugs<Routed> == step_slugs<Plain>);
static_assert(Routed::has_step<"upper"> && !Routed::has_step<"nope">);
static_assert(Deployed::queue_mode == QueueMode::kFlow && Routed::queue_mode == QueueMode::kStep);
static_assert(TypedFlow<Deployed> && TypedFlow<Routed>);
static_assert(Deployed::slug() == "greetUserV2");

TEST(DeployedFlowTest, AddsTheAliasAndKeepsEverythingElse) {
  EXPECT_EQ(deployed.alias(), "greetUser");
  EXPECT_EQ(deployed.definition().alias, "greetUser");
  EXPECT_EQ(alias_of(deployed.definition()), "greetUser");
  EXPECT_EQ(deployed.definition().slug, "greetUserV2")
      << "the concrete slug is the version's identity";
  EXPECT_EQ(shape_of(deployed), shape_of(greet_v2)) << "the alias is not part of the shape";
  EXPECT_EQ(deployed.definition().options.max_attempts, 2);
  EXPECT_EQ(deployed.definition().queue_mode, QueueMode::kFlow);
  ASSERT_EQ(deployed.definition().steps.size(), 3u);
  EXPECT_TRUE(deployed.definition().steps[2].handler) << "handlers come along";
  EXPECT_EQ(&deployed.flow().definition(), &greet_v2.definition())
      << "the wrapped flow is kept as it was";
  EXPECT_FALSE(greet_v2.definition().alias) << "and not changed";
}

TEST(DeployedFlowTest, AStepQueuedFlowKeepsItsQueueModeAndRoutes) {
  EXPECT_EQ(routed.alias(), "greetUser");
  EXPECT_EQ(routed.definition().queue_mode, QueueMode::kStep);
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::vector<StepRoute> routes, routes_of(routed.definition()));
  ASSERT_EQ(routes.size(), 3u);
  EXPECT_EQ(routes[0].queue_name, "greetuserv2__greet")
      << "queues are named after the concrete slug, never the alias";
  EXPECT_EQ(routes[2].queue_name, "greetuserv2__upper");
}

TEST(DeployedFlowTest, APlainFlowIsItsOwnAlias) {
  EXPECT_EQ(alias_of(greet_v2.definition()), "greetUserV2");
  EXPECT_EQ(alias_of(with_step_queues(greet_v2).definition()), "greetUserV2");
}

TEST(DeployedFlowTest, ARunTimeAliasIsCheckedByValidate) {
  std::string from_config = "greet__user";
  const auto bad = define_deployed_flow(greet_v2, {.alias = runtime(from_config)});
  EXPECT_EQ(bad.alias(), "greet__user");
  EXPECT_THAT(validate(bad.definition()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("greetUserV2"), HasSubstr("alias"), HasSubstr("__"))));
  const auto good = define_deployed_flow(greet_v2, {.alias = runtime("welcome")});
  EXPECT_THAT(validate(good.definition()), IsOk());
  EXPECT_EQ(good.alias(), "welcome");
}

TEST(DeployedFlowTest, ARunTimeAliasIsKeptAliveByEveryCopy) {
  std::optional<AliasName> kept;
  {
    AliasName original = runtime(std::string("welcome"));
    kept.emplace(std::move(original));  // (copies: AliasName has no move)
    EXPECT_EQ(original.value(), "welcome");
  }
  EXPECT_EQ(kept->value(), "welcome");
  AliasName literal = "greetUser";
  literal = *kept;
  kept.reset();
  EXPECT_EQ(literal.value(), "welcome");
}

TEST(DeployedFlowTest, AWorkerRefusesAnInvalidRunTimeAliasBeforeConnecting) {
  const auto bad = define_deployed_flow(greet_v2, {.alias = runtime("")});
  auto worker =
      EdgeWorker::start(bad, {.connection_string = "postgresql://nobody@127.0.0.1:1/never"});
  EXPECT_THAT(worker.status(), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("alias")));
}

TEST(DeployedFlowTest, AStepWorkerOfADeployedFlowSelectsItsStep) {
  auto worker = EdgeWorker::start(
      routed, {.connection_string = "postgresql://nobody@127.0.0.1:1/never", .step = "shipping"});
  EXPECT_THAT(worker.status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("step \"shipping\" is not a step of flow \"greetUserV2\"")));
}

}  // namespace
}  // namespace pgflow
