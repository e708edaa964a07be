// expect-success
// A matching signature compiles, with an optional leaf, and a producer's typed start and reads.
#include <optional>
#include <string>

#include "pgflow/client.h"
#include "pgflow/flow.h"
#include "pgflow/flow_signature.h"

using Signature = pgflow::FlowSignature<"shop", int, pgflow::Step<"a", int>,
                                        pgflow::OptionalLeaf<"b", std::string>>;
const auto flow =
    pgflow::implements<Signature>(pgflow::Flow<"shop", int>()
                                      .step<"a">([](int x) { return x + 1; })
                                      .step<"b">(pgflow::after<"a">, pgflow::when({{"a", 2}}),
                                                 [](int a) { return std::to_string(a); }));
static_assert(std::is_same_v<pgflow::FlowOutput<Signature>, pgflow::FlowOutput<decltype(flow)>>);
static_assert(std::is_same_v<pgflow::StepOutput<Signature, "a">, int>);
static_assert(std::is_same_v<pgflow::FlowInput<Signature>, int>);

absl::StatusOr<std::string> start(const pgflow::Client& client) {
  return client.start_run(Signature{}, 1);
}
std::optional<std::string> b_of(const pgflow::RunState& run) {
  return run.output_as<pgflow::FlowOutput<Signature>>()->get<"b">();
}
