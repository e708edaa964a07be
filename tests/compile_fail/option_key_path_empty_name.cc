// expect: pgflow: a concurrency_key path is dotted field names of the run input
// context: char\*\)"account\.\.id"
// A concurrency key's path is checked at compile time: no empty field name.
#include "pgflow/flow.h"

const auto flow =
    pgflow::Flow<"options", int>({.concurrency_limit = 5})
        .step<"a">({.concurrency_key = {.path = "account..id"}}, [](int x) { return x; });
