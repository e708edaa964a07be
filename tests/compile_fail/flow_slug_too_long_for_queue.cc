// expect: pgflow: a flow slug can be at most 47 characters long, because lower\(flow_slug\) names the flow's PGMQ queue
// A flow slug names its PGMQ queue, so it has at most 47 characters (48 here).
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"ffffffffffffffffffffffffffffffffffffffffffffffff", int>();
