// Typed flows executed by real workers in the worker integration tests.
#ifndef PGFLOW_TESTS_TESTING_WORKER_FLOWS_H_
#define PGFLOW_TESTS_TESTING_WORKER_FLOWS_H_

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "pgflow/flow.h"

namespace pgflow::testing::worker_flows {

using nlohmann::literals::operator""_json;

// a -> b -> c
inline const auto sequential = pgflow::Flow<"wSequential", int>()
                                   .step<"a">([](int x) { return x + 1; })
                                   .step<"b">(pgflow::after<"a">, [](int a) { return a * 2; })
                                   .step<"c">(pgflow::after<"b">, [](int b) { return b + 3; });

// left, right -> join (and join reads the run input lazily through its Context)
inline const auto fan_in =
    pgflow::Flow<"wFanIn", int>()
        .step<"left">([](int x) { return x + 1; })
        .step<"right">([](int x) { return x + 2; })
        .step<"join">(pgflow::after<"left", "right">, [](int l, int r, pgflow::Context& ctx) {
          absl::StatusOr<int> input = ctx.flow_input<int>();
          return l * r + (input.ok() ? *input : -1000);
        });

// root map -> dependent map -> single step
inline const auto maps = pgflow::Flow<"wMaps", std::vector<int>>()
                             .map<"square">([](int x) { return x * x; })
                             .map<"half">(pgflow::over<"square">, [](int x) { return x / 2; })
                             .step<"sum">(pgflow::after<"half">, [](const std::vector<int>& v) {
                               int sum = 0;
                               for (int x : v) sum += x;
                               return sum;
                             });

// conditions: skip (dependents run without it) and skip-cascade (dependents skipped too)
inline const auto conditional =
    pgflow::Flow<"wConditional", nlohmann::json>()
        .step<"root">([](const nlohmann::json& in) { return in; })
        .step<"vip">(pgflow::after<"root">, pgflow::when({{"root", {{"vip", true}}}}),
                     [](const nlohmann::json&) { return std::string("gift"); })
        .step<"audit">(pgflow::after<"root">, pgflow::when({{"root", {{"audit", true}}}}),
                       pgflow::when_unmet_skip_cascade, [](const nlohmann::json&) { return 1; })
        .step<"archive">(pgflow::after<"audit">, [](int a) { return a + 1; })
        .step<"report">(pgflow::after<"root", "vip">,
                        [](const nlohmann::json&, std::optional<std::string> gift) {
                          return gift.value_or("none");
                        });

// fails on attempts 1 and 2, succeeds on 3
inline const auto flaky =
    pgflow::Flow<"wFlaky", int>({.max_attempts = 3, .base_delay = 1})
        .step<"flaky">([](int x, pgflow::Context& ctx) -> absl::StatusOr<int> {
          if (ctx.attempt() < 3) return absl::UnavailableError("not yet");
          return x * 10;
        });

// one attempt, then each when_exhausted mode
inline const auto exhaust_fail =
    pgflow::Flow<"wExhaustFail", int>({.max_attempts = 1})
        .step<"boom">([](int) -> absl::StatusOr<int> { return absl::InternalError("boom failed"); })
        .step<"after">(pgflow::after<"boom">, [](int b) { return b; });
inline const auto exhaust_skip =
    pgflow::Flow<"wExhaustSkip", int>({.max_attempts = 1})
        .step<"boom">(pgflow::when_exhausted_skip,
                      [](int) -> int { throw std::runtime_error("thrown"); })
        .step<"after">(pgflow::after<"boom">,
                       [](std::optional<int> b) { return b.has_value() ? 1 : 0; });
inline const auto exhaust_cascade =
    pgflow::Flow<"wExhaustCascade", int>({.max_attempts = 1})
        .step<"boom">(pgflow::when_exhausted_skip_cascade,
                      [](int) -> absl::StatusOr<int> { return absl::InternalError("cascade"); })
        .step<"after">(pgflow::after<"boom">, [](int b) { return b; })
        .step<"other">([](int x) { return x; });

// messages become visible one second after the run starts
inline const auto delayed =
    pgflow::Flow<"wDelayed", int>().step<"later">({.start_delay = 1}, [](int x) { return x; });

}  // namespace pgflow::testing::worker_flows

#endif  // PGFLOW_TESTS_TESTING_WORKER_FLOWS_H_
