// expect: pgflow: the handler's result type has no JSON conversion
// context: Output = Opaque. Returned = Opaque\]
// Outputs are stored as JSON, so their type needs to_json and from_json.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

struct Opaque {
  int value;
};
const auto flow = pgflow::Flow<"handlers", int>().step<"opaque">([](int x) { return Opaque{x}; });
