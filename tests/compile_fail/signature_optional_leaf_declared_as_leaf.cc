// expect: pgflow: the flow does not match its signature: a leaf that may be skipped is a pgflow::OptionalLeaf
// Step b may be skipped (a condition): the run output may lack it, so FlowOutput needs an optional.
#include <string>

#include "pgflow/flow.h"
#include "pgflow/flow_signature.h"

using Signature =
    pgflow::FlowSignature<"shop", int, pgflow::Step<"a", int>, pgflow::Leaf<"b", std::string>>;
const auto flow =
    pgflow::implements<Signature>(pgflow::Flow<"shop", int>()
                                      .step<"a">([](int x) { return x + 1; })
                                      .step<"b">(pgflow::after<"a">, pgflow::when({{"a", 2}}),
                                                 [](int a) { return std::to_string(a); }));
