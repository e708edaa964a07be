// expect: pgflow: StepOutput<F, "slug">: the flow has no step with this slug
// Type utilities name existing steps only.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"types", int>().step<"a">([](int x) { return x; });
using Missing = pgflow::StepOutput<decltype(flow), "b">;
Missing* unused = nullptr;
