// expect: pgflow: the flow does not match its signature: the input type differs
// A producer would start runs with a long the flow reads as an int.
#include <string>

#include "pgflow/flow.h"
#include "pgflow/flow_signature.h"

using Signature =
    pgflow::FlowSignature<"shop", long, pgflow::Step<"a", int>, pgflow::Leaf<"b", std::string>>;
const auto flow = pgflow::implements<Signature>(
    pgflow::Flow<"shop", int>()
        .step<"a">([](int x) { return x + 1; })
        .step<"b">(pgflow::after<"a">, [](int a) { return std::to_string(a); }));
