// Every other code example of docs/flows.md, compiled by examples/CMakeLists.txt (through
// shape_dump.cc) so the documentation cannot drift from the API.
#ifndef PGFLOW_EXAMPLES_FLOWS_DOC_SNIPPETS_H_
#define PGFLOW_EXAMPLES_FLOWS_DOC_SNIPPETS_H_

#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "pgflow/flow.h"
#include "pgflow/step_queued_flow.h"

namespace doc_snippets {

using nlohmann::literals::operator""_json;

// [root map]
// The run input is an array; a map without over<...> processes each element.
inline const auto resize =
    pgflow::Flow<"resizeImages", std::vector<std::string>>()
        .map<"thumbnail">([](const std::string& url) { return url + "?w=200"; })
        .step<"publish">(pgflow::after<"thumbnail">,
                         [](const std::vector<std::string>& thumbs) { return thumbs.size(); });
// [root map]

// [conditions]
inline const auto orders =
    pgflow::Flow<"processOrder", nlohmann::json>()
        // Fails the run unless the input contains {"type": "order"}.
        .step<"validate">(
            pgflow::when({{"type", "order"}}), pgflow::when_unmet_fail,
            [](const nlohmann::json& order) { return order.at("total").get<double>(); })
        // Skipped, together with everything that depends on it, when the total is 0.
        .step<"fraudCheck">(pgflow::after<"validate">, pgflow::unless({{"validate", 0}}),
                            pgflow::when_unmet_skip_cascade,
                            [](double total) { return total > 1000; })
        .step<"hold">(pgflow::after<"fraudCheck">, [](bool suspicious) { return suspicious; })
        // Skipped (not failed) when every attempt fails; dependents get std::nullopt.
        .step<"recommend">(pgflow::after<"validate">, pgflow::when_exhausted_skip,
                           {.max_attempts = 2},
                           [](double) -> absl::StatusOr<std::vector<std::string>> {
                             return absl::UnavailableError("recommendation service is down");
                           })
        .step<"confirm">(pgflow::after<"validate", "recommend">,
                         [](double total, std::optional<std::vector<std::string>> picks) {
                           return nlohmann::json{
                               {"total", total},
                               {"picks", picks.value_or(std::vector<std::string>{})}};
                         });
// [conditions]

// [options]
inline int configured_timeout() { return 45; }  // e.g. read from a config file

inline const auto tuned =
    pgflow::Flow<"nightlyReport", int>({.max_attempts = 5, .base_delay = 2, .timeout = 120})
        .step<"extract">({.timeout = pgflow::runtime(configured_timeout())},
                         [](int day) { return day; })
        .step<"email">(pgflow::after<"extract">, {.max_attempts = 1, .start_delay = 60},
                       [](int /*rows*/) { return absl::OkStatus(); });
// [options]

// [step queues]
// The same flow with one queue per step: a burst of image-resizing tasks no longer delays
// `publish`, and each step gets its own workers (EdgeWorker::start(flow, pgflow::only_step<"...">)).
inline const auto resize_per_step = pgflow::with_step_queues(resize);
// Queues: resizeimages__thumbnail, resizeimages__publish (pgflow::routes_of).
static_assert(std::is_same_v<pgflow::FlowOutput<decltype(resize_per_step)>,
                             pgflow::FlowOutput<decltype(resize)>>);
// [step queues]

// [type utilities]
using ResizeInput = pgflow::FlowInput<decltype(resize)>;               // std::vector<std::string>
using Thumbnails = pgflow::StepOutput<decltype(resize), "thumbnail">;  // std::vector<std::string>
using OrderOutput = pgflow::FlowOutput<decltype(orders)>;              // leaves: hold?, confirm
static_assert(std::is_same_v<Thumbnails, std::vector<std::string>>);
static_assert(pgflow::step_slugs<decltype(orders)>[0] == "validate");
// [type utilities]
static_assert(OrderOutput::size == 2);
static_assert(
    std::is_same_v<std::remove_cvref_t<decltype(std::declval<OrderOutput>().get<"hold">())>,
                   std::optional<bool>>);

}  // namespace doc_snippets

#endif  // PGFLOW_EXAMPLES_FLOWS_DOC_SNIPPETS_H_
