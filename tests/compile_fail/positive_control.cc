// expect-success
// The same harness and flags compile a valid flow (every argument kind and handler shape), so
// a broken harness (wrong include path, wrong flags) cannot make the failure cases pass.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pgflow/flow.h"

using nlohmann::literals::operator""_json;

struct Signup {
  std::string email;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Signup, email)

const auto flow =
    pgflow::Flow<"onboardUser", Signup>({.max_attempts = 3, .timeout = 30})
        .step<"profile">([](const Signup& s) { return s.email; })
        .array<"friends">(pgflow::after<"profile">,
                          [](const std::string& p) { return std::vector<std::string>{p}; })
        .map<"notifyAll">(
            pgflow::over<"friends">, {.start_delay = 0, .concurrency_limit = 5},
            [](const std::string& f, pgflow::Context& ctx) { return f + ctx.run_id(); })
        .step<"gift">(
            pgflow::after<"profile">, pgflow::when(R"({"profile": "vip"})"_json),
            pgflow::unless({{"x", 1}}), pgflow::when_unmet_skip,
            pgflow::when_exhausted_skip_cascade, {.max_attempts = 1},
            [](const std::string& p) -> absl::StatusOr<int> { return static_cast<int>(p.size()); })
        .step<"report">(pgflow::after<"notifyAll", "gift">,
                        [](const std::vector<std::string>& ids, std::optional<int> gift) {
                          return static_cast<int>(ids.size()) + gift.value_or(0);
                        });

// Conversions that change no value stay allowed: a std::string as a std::string_view, a
// vector as a span, a size_t as an unsigned long long, a double as a long double; and a
// generic handler takes each value as it is.
const auto views =
    pgflow::Flow<"views", std::string>()
        .step<"length">([](std::string_view s) { return s.size(); })
        .array<"words">([](const std::string&) { return std::vector<int>{1}; })
        .step<"sum">(pgflow::after<"words">, [](std::span<const int> w) { return w.size(); })
        .step<"echo">(pgflow::after<"sum">, [](auto n) { return n; })
        .step<"wide">(pgflow::after<"length">,
                      [](unsigned long long n) { return static_cast<double>(n); })
        .step<"wider">(pgflow::after<"wide">, [](long double d) { return d > 1; });

static_assert(std::is_same_v<pgflow::StepOutput<decltype(flow), "report">, int>);

int main() { return pgflow::shape_of(flow).empty() || pgflow::shape_of(views).empty() ? 1 : 0; }
