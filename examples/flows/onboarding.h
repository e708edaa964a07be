// The onboarding flow of docs/flows.md: a root step, an array step, a dependent map, a
// conditional step and a fan-in that receives the conditional step as std::optional.
#ifndef PGFLOW_EXAMPLES_FLOWS_ONBOARDING_H_
#define PGFLOW_EXAMPLES_FLOWS_ONBOARDING_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "pgflow/flow.h"

namespace onboarding {

using nlohmann::literals::operator""_json;

// The run input and step outputs: plain structs with nlohmann conversions.
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
  std::string item;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Gift, item)

struct Sent {
  int count = 0;
  bool with_gift = false;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Sent, count, with_gift)

// [onboarding flow]
inline const auto flow =
    pgflow::Flow<"onboardUser", Signup>({.max_attempts = 3, .timeout = 30})
        // A root step receives the run input.
        .step<"profile">([](const Signup& s) -> absl::StatusOr<Profile> {
          if (s.email.empty()) return absl::InvalidArgumentError("signup without an email");
          return Profile{s.email, s.email.ends_with("@vip.example")};
        })
        // A dependent step receives its dependencies' outputs, in after<...> order.
        .array<"friends">(pgflow::after<"profile">,
                          [](const Profile& p) {
                            return std::vector<Friend>{{p.id + "/alice"}, {p.id + "/bob"}};
                          })
        // A map step runs once per element of its source array; its output is the array of
        // the handler's results, in element order.
        .map<"notifyAll">(pgflow::over<"friends">, {.timeout = 10},
                          [](const Friend& f, pgflow::Context& ctx) {
                            ctx.log().info("notifying", {{"friend", f.id}});
                            return f.id;
                          })
        // Runs only for VIP profiles; otherwise it is skipped (mode skip, the default)...
        .step<"gift">(pgflow::after<"profile">, pgflow::when(R"({"profile": {"vip": true}})"_json),
                      [](const Profile& p) { return Gift{"mug for " + p.id}; })
        // ...so its dependents receive it as std::optional.
        .step<"report">(pgflow::after<"notifyAll", "gift">,
                        [](const std::vector<std::string>& notified, std::optional<Gift> gift) {
                          return Sent{static_cast<int>(notified.size()), gift.has_value()};
                        });
// [onboarding flow]

}  // namespace onboarding

#endif  // PGFLOW_EXAMPLES_FLOWS_ONBOARDING_H_
