// bench/compile: nlohmann/json.hpp alone (what client.h pays for RunState's JSON members).
#include "nlohmann/json.hpp"

int main() { return 0; }
