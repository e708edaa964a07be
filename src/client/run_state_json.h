// RunState from the JSON of pgflow.get_run_with_states (and start_flow_with_states).
#ifndef PGFLOW_CLIENT_RUN_STATE_JSON_H_
#define PGFLOW_CLIENT_RUN_STATE_JSON_H_

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "pgflow/run_state.h"

namespace pgflow::internal {

// kInternal naming the field when the JSON is not what the SQL core returns (e.g. a status
// this library does not know: a newer schema).
absl::StatusOr<RunState> run_state_from_json(const nlohmann::json& run_with_states);

}  // namespace pgflow::internal

#endif  // PGFLOW_CLIENT_RUN_STATE_JSON_H_
