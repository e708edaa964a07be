// Typed flows shared by the DSL unit tests and the flow-shape database test. Each one
// exercises a part of the shape: the architecture sketch, maps, conditions and modes,
// options, dependency sorting, an empty flow.
#ifndef PGFLOW_TESTS_TESTING_TEST_FLOWS_H_
#define PGFLOW_TESTS_TESTING_TEST_FLOWS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "pgflow/flow.h"

namespace pgflow::testing::flows {

using nlohmann::literals::operator""_json;

struct Signup {
  std::string email;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Signup, email)
struct Profile {
  std::string id;
  bool vip = false;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Profile, id, vip)
struct Friend {
  std::string id;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Friend, id)
struct Gift {
  std::string what;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Gift, what)
struct Sent {
  int count = 0;
  bool gift = false;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Sent, count, gift)

// The architecture sketch (spec §4.1).
inline const auto onboarding =
    pgflow::Flow<"onboardUser", Signup>({.max_attempts = 3, .timeout = 30})
        .step<"profile">([](const Signup& s) {
          return Profile{s.email, s.email == "vip@example.com"};
        })
        .array<"friends">(pgflow::after<"profile">,
                          [](const Profile& p) {
                            return std::vector<Friend>{{p.id + "-f1"}, {p.id + "-f2"}};
                          })
        .map<"notifyAll">(pgflow::over<"friends">,
                          [](const Friend& f, pgflow::Context& ctx) {
                            return f.id + "@" + std::to_string(ctx.task_index());
                          })
        .step<"gift">(pgflow::after<"profile">, pgflow::when(R"({"profile": {"vip": true}})"_json),
                      pgflow::when_unmet_skip,
                      [](const Profile& p) { return Gift{"mug for " + p.id}; })
        .step<"report">(pgflow::after<"notifyAll", "gift">,
                        [](const std::vector<std::string>& ids, std::optional<Gift> g) {
                          return Sent{static_cast<int>(ids.size()), g.has_value()};
                        });

// A root map over the run input, a map over a map, a dependent single step after a map.
inline const auto maps =
    pgflow::Flow<"batchMaps", std::vector<int>>()
        .map<"double">({.max_attempts = 5}, [](int x) { return x * 2; })
        .map<"label">(pgflow::over<"double">, [](int x) { return absl::StrCat("n", x); })
        .step<"count">(pgflow::after<"label">, [](const std::vector<std::string>& labels) {
          return static_cast<int>(labels.size());
        });

// if / ifNot patterns and every when_unmet / when_exhausted mode.
inline const auto conditions =
    pgflow::Flow<"conditionalFlow", nlohmann::json>()
        .step<"check">(pgflow::when({{"kind", "order"}}), pgflow::when_unmet_fail,
                       [](const nlohmann::json& in) { return in; })
        .step<"maybe">(pgflow::after<"check">, pgflow::unless({{"check", {{"test", true}}}}),
                       [](const nlohmann::json&) { return 1; })
        .step<"cascade">(pgflow::after<"check">, pgflow::when({{"check", {{"kind", "order"}}}}),
                         pgflow::unless({{"check", {{"cancelled", true}}}}),
                         pgflow::when_unmet_skip_cascade, [](const nlohmann::json&) { return 2; })
        .step<"fragile">(pgflow::after<"check">, pgflow::when_exhausted_skip,
                         [](const nlohmann::json&) { return 3; })
        .step<"final">(pgflow::after<"maybe", "cascade", "fragile">,
                       pgflow::when_exhausted_skip_cascade,
                       [](std::optional<int> maybe, int cascade, std::optional<int> fragile) {
                         return maybe.value_or(0) + cascade + fragile.value_or(0);
                       });

// Flow options and every step option.
inline const auto options =
    pgflow::Flow<"tunedFlow", int>({.max_attempts = 4, .base_delay = 2, .timeout = 90})
        .step<"fast">({.max_attempts = 1, .base_delay = 1, .timeout = 3, .start_delay = 0},
                      [](int x) { return x; })
        .step<"slow">(pgflow::after<"fast">, {.timeout = 600, .start_delay = 30},
                      [](int x) { return x + 1; })
        .step<"plain">(pgflow::after<"slow">, [](int x) { return x + 2; });

// Dependencies listed out of order and in mixed case: the shape sorts them by byte order.
inline const auto sorted_deps = pgflow::Flow<"sortedDeps", int>()
                                    .step<"mid">([](int x) { return x; })
                                    .step<"alpha">([](int x) { return x; })
                                    .step<"Zeta">([](int x) { return x; })
                                    .step<"join">(pgflow::after<"mid", "alpha", "Zeta">,
                                                  [](int m, int a, int z) { return m + a + z; });

inline const auto empty = pgflow::Flow<"emptyFlow", int>();

}  // namespace pgflow::testing::flows

#endif  // PGFLOW_TESTS_TESTING_TEST_FLOWS_H_
