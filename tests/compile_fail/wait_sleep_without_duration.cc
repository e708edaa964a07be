// expect: pgflow: \.sleep needs one pgflow::sleep_for
// A sleep needs its duration or its timestamp.
#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"waits", int>().sleep<"nap">();
