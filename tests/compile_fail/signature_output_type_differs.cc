// expect: pgflow: the flow does not match its signature: a step's output type differs
// A producer that reads step b as an int would misread the string the flow returns.
#include <string>

#include "pgflow/flow.h"
#include "pgflow/flow_signature.h"

using Signature =
    pgflow::FlowSignature<"shop", int, pgflow::Step<"a", int>, pgflow::Leaf<"b", int>>;
const auto flow = pgflow::implements<Signature>(
    pgflow::Flow<"shop", int>()
        .step<"a">([](int x) { return x + 1; })
        .step<"b">(pgflow::after<"a">, [](int a) { return std::to_string(a); }));
