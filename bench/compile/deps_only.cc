// bench/compile: the Abseil and standard headers pgflow/client.h includes, without pgflow's
// and without nlohmann/json.hpp (the floor of a client.h that declared JSON only).
#include <chrono>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "nlohmann/json_fwd.hpp"

int main() { return 0; }
