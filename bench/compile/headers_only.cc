// bench/compile: the headers a worker program includes, nothing instantiated.
#include "pgflow/client.h"
#include "pgflow/flow.h"
#include "pgflow/worker.h"

int main() { return 0; }
