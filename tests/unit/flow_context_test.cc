// pgflow::Context: accessors, the lazily loaded and cached run input, typed access.
#include <chrono>
#include <stop_token>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "pgflow/context.h"
#include "testing/status_matchers.h"
#include "testing/test_flows.h"

namespace pgflow {
namespace {

using ::nlohmann::literals::operator""_json;
using ::pgflow::testing::IsOk;
using ::pgflow::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(FlowContext, Accessors) {
  std::stop_source stop;
  const auto deadline = std::chrono::system_clock::now() + std::chrono::seconds(30);
  Context ctx({.flow_slug = "onboardUser",
               .run_id = "7d1f0c4e-4c2b-4d8f-9a3e-2f6f3b8f5a10",
               .step_slug = "notifyAll",
               .task_index = 3,
               .attempt = 2,
               .message_id = "9007199254740993",  // 2^53 + 1: exact only as text
               .stop_token = stop.get_token(),
               .deadline = deadline});
  EXPECT_EQ(ctx.flow_slug(), "onboardUser");
  EXPECT_EQ(ctx.run_id(), "7d1f0c4e-4c2b-4d8f-9a3e-2f6f3b8f5a10");
  EXPECT_EQ(ctx.step_slug(), "notifyAll");
  EXPECT_EQ(ctx.task_index(), 3);
  EXPECT_EQ(ctx.attempt(), 2);
  EXPECT_EQ(ctx.message_id(), "9007199254740993");
  EXPECT_EQ(ctx.deadline(), deadline);
  EXPECT_FALSE(ctx.stop_token().stop_requested());
  stop.request_stop();
  EXPECT_TRUE(ctx.stop_token().stop_requested());
  EXPECT_FALSE(ctx.log().enabled(LogLevel::kError));  // default logger discards
}

TEST(FlowContext, DefaultDeadlineIsNever) {
  Context ctx({});
  EXPECT_EQ(ctx.deadline(), std::chrono::system_clock::time_point::max());
}

TEST(FlowContext, FlowInputIsLoadedOnceAndCached) {
  int calls = 0;
  Context ctx({.flow_input_provider = [&]() -> absl::StatusOr<nlohmann::json> {
    ++calls;
    return R"({"email": "a@example.com"})"_json;
  }});
  EXPECT_EQ(calls, 0);  // lazy: nothing loaded until asked
  ASSERT_THAT(ctx.flow_input(), IsOk());
  ASSERT_THAT(ctx.flow_input(), IsOk());
  absl::StatusOr<testing::flows::Signup> typed = ctx.flow_input<testing::flows::Signup>();
  ASSERT_THAT(typed, IsOk());
  EXPECT_EQ(typed->email, "a@example.com");
  EXPECT_EQ(calls, 1);
}

TEST(FlowContext, FailedLoadIsNotCached) {
  int calls = 0;
  Context ctx({.flow_input_provider = [&]() -> absl::StatusOr<nlohmann::json> {
    if (++calls == 1) return absl::UnavailableError("server closed the connection");
    return 5;
  }});
  EXPECT_THAT(ctx.flow_input(), StatusIs(absl::StatusCode::kUnavailable, HasSubstr("closed")));
  EXPECT_EQ(ctx.flow_input().value(), 5);
  EXPECT_EQ(ctx.flow_input().value(), 5);
  EXPECT_EQ(calls, 2);
}

TEST(FlowContext, KnownFlowInputNeedsNoProvider) {
  int calls = 0;
  Context ctx({.flow_input = nlohmann::json{1, 2, 3},
               .flow_input_provider = [&]() -> absl::StatusOr<nlohmann::json> {
                 ++calls;
                 return nullptr;
               }});
  EXPECT_EQ(ctx.flow_input().value(), nlohmann::json({1, 2, 3}));
  EXPECT_EQ(calls, 0);
}

TEST(FlowContext, NoInputAndNoProviderIsAnError) {
  Context ctx({.step_slug = "s"});
  EXPECT_THAT(ctx.flow_input(),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("not available")));
}

TEST(FlowContext, TypedFlowInputConversionError) {
  Context ctx({.flow_slug = "f", .step_slug = "s", .flow_input = R"({"email": 7})"_json});
  EXPECT_THAT(ctx.flow_input<testing::flows::Signup>(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("flow \"f\", step \"s\""), HasSubstr("flow input"))));
}

}  // namespace
}  // namespace pgflow
