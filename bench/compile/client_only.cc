// bench/compile: pgflow/client.h alone.
#include "pgflow/client.h"

int main() { return 0; }
