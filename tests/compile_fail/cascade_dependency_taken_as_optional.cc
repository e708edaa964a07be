// expect: pgflow: the handler takes std::optional<T> for a dependency that always has a value
// context: AfterTag<pgflow::detail::FixedString<4>{"gift"}>
// With skip-cascade the dependent is skipped too, so when it runs the dependency is there: take T.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

using nlohmann::literals::operator""_json;
const auto flow = pgflow::Flow<"conditions", int>()
                      .step<"gift">(pgflow::when(R"({"vip": true})"_json),
                                    pgflow::when_unmet_skip_cascade, [](int x) { return x; })
                      .step<"report">(pgflow::after<"gift">,
                                      [](std::optional<int> gift) { return gift.value_or(0); });
