#include "pgflow/context.h"

#include <utility>

namespace pgflow {

Context::Context(Init init) : init_(std::move(init)) {}

absl::StatusOr<nlohmann::json> Context::flow_input() {
  if (init_.flow_input.has_value()) return *init_.flow_input;
  if (!init_.flow_input_provider) {
    return absl::FailedPreconditionError(
        "the run input is not available: this Context has neither a flow input nor a provider");
  }
  absl::StatusOr<nlohmann::json> loaded = init_.flow_input_provider();
  if (!loaded.ok()) return loaded.status();
  init_.flow_input = *std::move(loaded);
  return *init_.flow_input;
}

}  // namespace pgflow
