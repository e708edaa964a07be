// expect: pgflow: the flow does not match its signature: it has another number of steps
// A signature lists every step; one that omits step a has drifted from the flow.
#include <string>

#include "pgflow/flow.h"
#include "pgflow/flow_signature.h"

using Signature = pgflow::FlowSignature<"shop", int, pgflow::Leaf<"b", std::string>>;
const auto flow = pgflow::implements<Signature>(
    pgflow::Flow<"shop", int>()
        .step<"a">([](int x) { return x + 1; })
        .step<"b">(pgflow::after<"a">, [](int a) { return std::to_string(a); }));
