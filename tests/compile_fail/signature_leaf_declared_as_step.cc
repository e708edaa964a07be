// expect: pgflow: the flow does not match its signature: a step nothing depends on must be a pgflow::Leaf
// Step b is a leaf (part of the run output); a signature that says otherwise gets FlowOutput wrong.
#include <string>

#include "pgflow/flow.h"
#include "pgflow/flow_signature.h"

using Signature =
    pgflow::FlowSignature<"shop", int, pgflow::Step<"a", int>, pgflow::Step<"b", std::string>>;
const auto flow = pgflow::implements<Signature>(
    pgflow::Flow<"shop", int>()
        .step<"a">([](int x) { return x + 1; })
        .step<"b">(pgflow::after<"a">, [](int a) { return std::to_string(a); }));
