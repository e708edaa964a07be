// The typed start overloads Client and Transaction share: each takes a typed flow and its
// input type, and calls the untyped call of the same name with the flow's alias or slug.
#ifndef PGFLOW_DETAIL_TYPED_STARTS_H_
#define PGFLOW_DETAIL_TYPED_STARTS_H_

#include <optional>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "pgflow/flow_definition.h"
#include "pgflow/run_state.h"
#include "pgflow/typed_flow.h"

namespace pgflow::detail {

// CRTP base: Derived has the untyped calls (const) and brings these in with `using`.
template <typename Derived>
class TypedStarts {
 public:
  // start_flow and start_flow_by_alias start the flow's alias (a DeployedFlow's alias, a
  // plain flow's slug); start_flow_by_slug its own version.
  template <TypedFlow F>
  absl::StatusOr<RunState> start_flow(const F& flow, const FlowInput<F>& input,
                                      std::optional<std::string> run_id = std::nullopt) const {
    return self().start_flow(alias_of(flow.definition()), nlohmann::json(input), std::move(run_id));
  }
  template <TypedFlow F>
  absl::StatusOr<RunState> start_flow_by_alias(const F& flow, const FlowInput<F>& input,
                                               std::optional<std::string> run_id = std::nullopt) const {
    return self().start_flow_by_alias(alias_of(flow.definition()), nlohmann::json(input), std::move(run_id));
  }
  template <TypedFlow F>
  absl::StatusOr<RunState> start_flow_by_slug(const F& flow, const FlowInput<F>& input,
                                              std::optional<std::string> run_id = std::nullopt) const {
    return self().start_flow_by_slug(flow.definition().slug, nlohmann::json(input), std::move(run_id));
  }
  template <TypedFlow F>
  absl::StatusOr<std::string> start_run(const F& flow, const FlowInput<F>& input,
                                        std::optional<std::string> run_id = std::nullopt) const {
    return self().start_run(alias_of(flow.definition()), nlohmann::json(input), std::move(run_id));
  }
  template <TypedFlow F>
  absl::StatusOr<std::string> start_run_by_slug(const F& flow, const FlowInput<F>& input,
                                                std::optional<std::string> run_id = std::nullopt) const {
    return self().start_run_by_slug(flow.definition().slug, nlohmann::json(input), std::move(run_id));
  }

 private:
  const Derived& self() const { return static_cast<const Derived&>(*this); }
};

}  // namespace pgflow::detail

#endif  // PGFLOW_DETAIL_TYPED_STARTS_H_
