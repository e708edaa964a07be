// expect: pgflow: a flow slug must start with a letter, not a digit
// The flow slug follows the same rules as step slugs.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"1flow", int>();
