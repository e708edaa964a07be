// The erased handlers of typed flows, called the way the worker will call them: with the
// claim's JSON `input` and a Context.
#include <atomic>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "pgflow/context.h"
#include "pgflow/flow.h"
#include "testing/status_matchers.h"
#include "testing/test_flows.h"

namespace pgflow {
namespace {

using ::nlohmann::literals::operator""_json;
using ::pgflow::testing::IsOk;
using ::pgflow::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
namespace flows = pgflow::testing::flows;

// Calls step `slug` of `flow` with `input` and a Context whose run input is `run_input`.
template <typename F>
absl::StatusOr<nlohmann::json> call(const F& flow, std::string_view slug,
                                    const nlohmann::json& input,
                                    std::optional<nlohmann::json> run_input = std::nullopt) {
  const StepDefinition* step = flow.definition().find(slug);
  if (step == nullptr) return absl::NotFoundError("no such step");
  Context ctx({.flow_slug = flow.definition().slug,
               .step_slug = std::string(slug),
               .flow_input = run_input});
  return step->handler(input, ctx);
}

TEST(FlowHandler, RootStepReadsTheRunInputFromTheContext) {
  auto out = call(flows::onboarding, "profile", nlohmann::json::object(),
                  R"({"email": "vip@example.com"})"_json);
  ASSERT_THAT(out, IsOk());
  EXPECT_EQ(*out, R"({"id": "vip@example.com", "vip": true})"_json);
}

TEST(FlowHandler, RootStepLoadsTheRunInputThroughTheProvider) {
  int loads = 0;
  Context ctx({.flow_slug = "onboardUser",
               .step_slug = "profile",
               .flow_input_provider = [&]() -> absl::StatusOr<nlohmann::json> {
                 ++loads;
                 return R"({"email": "a@b"})"_json;
               }});
  auto out = flows::onboarding.definition().find("profile")->handler(nlohmann::json::object(), ctx);
  ASSERT_THAT(out, IsOk());
  EXPECT_EQ((*out)["id"], "a@b");
  EXPECT_EQ(loads, 1);
}

TEST(FlowHandler, RunInputLoadFailureIsReturned) {
  Context ctx({.flow_input_provider = []() -> absl::StatusOr<nlohmann::json> {
    return absl::UnavailableError("connection lost");
  }});
  EXPECT_THAT(
      flows::onboarding.definition().find("profile")->handler(nlohmann::json::object(), ctx),
      StatusIs(absl::StatusCode::kUnavailable, HasSubstr("connection lost")));
}

TEST(FlowHandler, RunInputConversionErrorNamesFlowAndStep) {
  EXPECT_THAT(call(flows::onboarding, "profile", nlohmann::json::object(), R"({"mail": 1})"_json),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("flow \"onboardUser\""), HasSubstr("step \"profile\""),
                             HasSubstr("flow input"))));
}

TEST(FlowHandler, DependentStepGetsDependencyOutputsInAfterOrder) {
  auto out = call(flows::sorted_deps, "join", R"({"Zeta": 100, "alpha": 10, "mid": 1})"_json);
  ASSERT_THAT(out, IsOk());
  EXPECT_EQ(*out, 111);
}

TEST(FlowHandler, SkippedOptionalDependencyArrivesAsNullopt) {
  auto skipped = call(flows::onboarding, "report", R"({"notifyAll": ["a", "b", "c"]})"_json);
  ASSERT_THAT(skipped, IsOk());
  EXPECT_EQ(*skipped, R"({"count": 3, "gift": false})"_json);

  auto present =
      call(flows::onboarding, "report", R"({"notifyAll": [], "gift": {"what": "mug"}})"_json);
  ASSERT_THAT(present, IsOk());
  EXPECT_EQ(*present, R"({"count": 0, "gift": true})"_json);
}

TEST(FlowHandler, EveryOptionalDependencySkipped) {
  // `final` takes maybe and fragile as std::optional; the SQL core sends only completed deps.
  auto out = call(flows::conditions, "final", R"({"cascade": 2})"_json);
  ASSERT_THAT(out, IsOk());
  EXPECT_EQ(*out, 2);
}

TEST(FlowHandler, MissingRequiredDependencyNamesIt) {
  EXPECT_THAT(call(flows::onboarding, "report", R"({"gift": {"what": "mug"}})"_json),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("flow \"onboardUser\""), HasSubstr("step \"report\""),
                             HasSubstr("dependency \"notifyAll\""))));
}

TEST(FlowHandler, DependencyConversionErrorNamesFlowStepAndDependency) {
  EXPECT_THAT(call(flows::onboarding, "report", R"({"notifyAll": [], "gift": {"what": 42}})"_json),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("flow \"onboardUser\""), HasSubstr("step \"report\""),
                             HasSubstr("dependency \"gift\""), HasSubstr("type must be string"))));
}

TEST(FlowHandler, DependentInputMustBeAnObject) {
  EXPECT_THAT(call(flows::onboarding, "report", R"([1, 2])"_json),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("step \"report\""), HasSubstr("got array"))));
}

TEST(FlowHandler, MapStepGetsOneElement) {
  Context ctx({.flow_slug = "onboardUser", .step_slug = "notifyAll", .task_index = 4});
  auto out = flows::onboarding.definition().find("notifyAll")->handler(R"({"id": "f9"})"_json, ctx);
  ASSERT_THAT(out, IsOk());
  EXPECT_EQ(*out, "f9@4");

  auto root = call(flows::maps, "double", 21);
  ASSERT_THAT(root, IsOk());
  EXPECT_EQ(*root, 42);
}

TEST(FlowHandler, MapElementConversionErrorNamesIndex) {
  Context ctx({.flow_slug = "batchMaps", .step_slug = "double", .task_index = 7});
  EXPECT_THAT(flows::maps.definition().find("double")->handler("seven", ctx),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("flow \"batchMaps\""), HasSubstr("step \"double\""),
                             HasSubstr("map element at index 7"))));
}

struct Throws {};
[[noreturn]] void to_json(nlohmann::json&, const Throws&) {
  throw std::runtime_error("cannot encode Throws");
}
void from_json(const nlohmann::json&, Throws&) {}

const auto results =
    Flow<"results", int>()
        .step<"voidStep">([](int) {})
        .step<"statusOk">([](int) { return absl::OkStatus(); })
        .step<"statusError">([](int) { return absl::FailedPreconditionError("not ready yet"); })
        .step<"statusOrValue">([](int x) -> absl::StatusOr<int> { return x * 10; })
        .step<"statusOrError">(
            [](int) -> absl::StatusOr<int> { return absl::NotFoundError("no such user"); })
        .step<"throwsStd">([](int) -> int { throw std::invalid_argument("bad input 7"); })
        .step<"throwsOther">([](int) -> int { throw 42; })
        .step<"zero">([](int) { return 0; })
        .step<"falseValue">([](int) { return false; })
        .step<"emptyString">([](int) { return std::string(); })
        .step<"emptyArray">([](int) { return std::vector<int>{}; })
        .step<"json">([](int) { return nlohmann::json(nullptr); })
        .step<"badOutput">([](int) { return Throws{}; })
        .step<"withContext">([](int, Context& ctx) {
          return ctx.step_slug() + "#" + std::to_string(ctx.attempt());
        });

TEST(FlowHandler, ResultKinds) {
  const nlohmann::json in = nlohmann::json::object();
  EXPECT_EQ(call(results, "voidStep", in, 1).value(), nullptr);
  EXPECT_EQ(call(results, "statusOk", in, 1).value(), nullptr);
  EXPECT_THAT(call(results, "statusError", in, 1),
              StatusIs(absl::StatusCode::kFailedPrecondition, "not ready yet"));
  EXPECT_EQ(call(results, "statusOrValue", in, 4).value(), 40);
  EXPECT_THAT(call(results, "statusOrError", in, 1),
              StatusIs(absl::StatusCode::kNotFound, "no such user"));
  EXPECT_EQ(call(results, "json", in, 1).value(), nullptr);
  EXPECT_EQ(call(results, "withContext", in, 1).value(), "withContext#1");
}

TEST(FlowHandler, FalsyOutputsAreStoredAsThemselves) {
  const nlohmann::json in = nlohmann::json::object();
  EXPECT_EQ(call(results, "zero", in, 1).value().dump(), "0");
  EXPECT_EQ(call(results, "falseValue", in, 1).value().dump(), "false");
  EXPECT_EQ(call(results, "emptyString", in, 1).value().dump(), "\"\"");
  EXPECT_EQ(call(results, "emptyArray", in, 1).value().dump(), "[]");
}

TEST(FlowHandler, ExceptionsBecomeStatuses) {
  const nlohmann::json in = nlohmann::json::object();
  EXPECT_THAT(call(results, "throwsStd", in, 1),
              StatusIs(absl::StatusCode::kUnknown, "bad input 7"));
  EXPECT_THAT(call(results, "throwsOther", in, 1),
              StatusIs(absl::StatusCode::kUnknown, HasSubstr("not a std::exception")));
}

TEST(FlowHandler, OutputConversionErrorNamesFlowAndStep) {
  EXPECT_THAT(call(results, "badOutput", nlohmann::json::object(), 1),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("flow \"results\""), HasSubstr("step \"badOutput\""),
                             HasSubstr("cannot encode Throws"))));
}

// A binary value (CBOR's byte strings parse to one) has no JSON form: dump() would store
// {"bytes": [...], "subtype": ...} instead, which no dependent reads back as bytes.
TEST(FlowHandler, ABinaryOutputIsRefusedNotRewritten) {
  const auto bytes = Flow<"bytesOut", int>().step<"raw">([](int) {
    return nlohmann::json::binary({0xca, 0xfe});
  });
  EXPECT_THAT(call(bytes, "raw", nlohmann::json::object(), 1),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("step \"raw\""), HasSubstr("holds a binary value"))));
}

TEST(FlowHandler, MoveOnlyHandlersAndCheapCopies) {
  auto owned = std::make_unique<int>(5);
  const auto flow =
      Flow<"moveOnly", int>().step<"add">([p = std::move(owned)](int x) { return x + *p; });
  StepHandler copy = flow.definition().find("add")->handler;  // shares the handler
  Context ctx({.flow_input = 1});
  EXPECT_EQ(copy(nlohmann::json::object(), ctx).value(), 6);

  // Copies share the stored callable: copying handlers copies no capture (counted through a
  // shared_ptr the capture holds).
  auto token = std::make_shared<int>(7);
  const std::weak_ptr<int> watch = token;
  const auto counted =
      Flow<"counted", int>().step<"add">([t = std::move(token)](int x) { return x + *t; });
  const long stored = watch.use_count();
  StepHandler a = counted.definition().find("add")->handler;
  StepHandler b = a;
  const std::vector<StepHandler> more(10, b);
  EXPECT_EQ(watch.use_count(), stored);
  EXPECT_EQ(more.back()(nlohmann::json::object(), ctx).value(), 8);
}

TEST(FlowHandler, ConcurrentCallsOfOneHandler) {
  std::atomic<int> calls{0};
  const auto flow = Flow<"concurrent", std::vector<int>>().map<"square">([&calls](int x) {
    calls.fetch_add(1, std::memory_order_relaxed);
    return x * x;
  });
  const StepHandler& handler = flow.definition().find("square")->handler;
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        Context ctx({.task_index = i});
        auto out = handler(t * 1000 + i, ctx);
        if (!out.ok() || *out != (t * 1000 + i) * (t * 1000 + i)) wrong.fetch_add(1);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(calls.load(), 800);
}

}  // namespace
}  // namespace pgflow
