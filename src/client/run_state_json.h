// RunState from the JSON of pgflow.get_run_with_states (and start_flow_with_states), and the
// field reader the client's other JSON replies share.
#ifndef PGFLOW_CLIENT_RUN_STATE_JSON_H_
#define PGFLOW_CLIENT_RUN_STATE_JSON_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "pgflow/run_state.h"

namespace pgflow::internal {

// kInternal naming the field when the JSON is not what the SQL core returns (e.g. a status
// this library does not know: a newer schema).
absl::StatusOr<RunState> run_state_from_json(const nlohmann::json& run_with_states);

// j[key] as text: nullopt when absent or null; a non-string value as its JSON text.
std::optional<std::string> json_string(const nlohmann::json& j, const char* key);

}  // namespace pgflow::internal

#endif  // PGFLOW_CLIENT_RUN_STATE_JSON_H_
