// expect: pgflow: the flow does not match its signature: the flow slug differs
// Producers would start "store", a flow this worker does not serve.
#include <string>

#include "pgflow/flow.h"
#include "pgflow/flow_signature.h"

using Signature =
    pgflow::FlowSignature<"store", int, pgflow::Step<"a", int>, pgflow::Leaf<"b", std::string>>;
const auto flow = pgflow::implements<Signature>(
    pgflow::Flow<"shop", int>()
        .step<"a">([](int x) { return x + 1; })
        .step<"b">(pgflow::after<"a">, [](int a) { return std::to_string(a); }));
