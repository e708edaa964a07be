// expect: pgflow: the flow does not match its signature: a step slug differs
// The signature names step b "c": typed reads of "c" would find nothing.
#include <string>

#include "pgflow/flow.h"
#include "pgflow/flow_signature.h"

using Signature =
    pgflow::FlowSignature<"shop", int, pgflow::Step<"a", int>, pgflow::Leaf<"c", std::string>>;
const auto flow = pgflow::implements<Signature>(
    pgflow::Flow<"shop", int>()
        .step<"a">([](int x) { return x + 1; })
        .step<"b">(pgflow::after<"a">, [](int a) { return std::to_string(a); }));
