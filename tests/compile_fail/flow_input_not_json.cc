// expect: pgflow: the flow input type has no JSON conversion
// The run input is JSON, so its type needs to_json and from_json.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

struct Opaque {
  int value;
};
const auto flow = pgflow::Flow<"inputs", Opaque>();
