// expect-success
// Every kind of wait step and wait argument compiles, and dependents receive their outputs typed.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

using namespace std::chrono_literals;

struct Approval {
  bool approved = false;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Approval, approved)

const auto flow =
    pgflow::Flow<"waits", std::string>()
        .array<"drafts">([](const std::string& s) { return std::vector<std::string>{s}; })
        .signal<"approve", Approval>(pgflow::after<"drafts">)
        .signal<"review", Approval>(pgflow::after<"drafts">,
                                    pgflow::signal_timeout(24h, Approval{false}))
        .signal<"answer", std::string>(pgflow::after<"drafts">, pgflow::signal_timeout(1h),
                                       pgflow::when_exhausted_skip)
        .signal_each<"votes", int>(pgflow::over<"drafts">)
        .sleep<"nap">(pgflow::after<"approve">, pgflow::sleep_for(30s))
        .sleep<"shipDay">(pgflow::after<"drafts">, pgflow::sleep_until("run.ship_at"))
        .step<"report">(
            pgflow::after<"approve", "review", "answer", "votes", "nap", "shipDay">,
            [](const Approval& a, const Approval& r, const std::optional<std::string>& answer,
               const std::vector<int>& votes, const pgflow::Slept& nap, const pgflow::Slept&) {
              return a.approved && r.approved && answer && !votes.empty() && !nap.until.empty();
            });
