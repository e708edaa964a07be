// The non-template half of handler erasure (pgflow/detail/handler.h): the StepHandler that
// wraps every typed handler and turns exceptions into statuses, and the status builders, so
// that every message has one spelling.
#include "pgflow/detail/handler.h"

#include <exception>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "internal/strings.h"
#include "internal/text_checks.h"
#include "pgflow/context.h"
#include "pgflow/status.h"

namespace pgflow::detail {
namespace {

using internal::absl_view;

std::string where(std::string_view flow, std::string_view step) {
  return absl::StrCat("flow \"", absl_view(flow), "\", step \"", absl_view(step), "\": ");
}

}  // namespace

// Every conversion failure is permanent (pgflow/status.h): the same input converts the same way
// on every attempt, so a retry could only fail again.
absl::Status flow_input_conversion_error(std::string_view flow_slug, std::string_view step_slug,
                                         std::string_view reason) {
  return permanent(absl::InvalidArgumentError(absl::StrCat(
      where(flow_slug, step_slug), "cannot convert the flow input: ", absl_view(reason))));
}

absl::Status missing_dependency_error(std::string_view flow, std::string_view step,
                                      std::string_view dependency) {
  return permanent(absl::InvalidArgumentError(absl::StrCat(
      where(flow, step), "the input has no output of dependency \"", absl_view(dependency), "\"")));
}

absl::Status dependency_conversion_error(std::string_view flow, std::string_view step,
                                         std::string_view dependency, std::string_view reason) {
  return permanent(absl::InvalidArgumentError(
      absl::StrCat(where(flow, step), "cannot convert the output of dependency \"",
                   absl_view(dependency), "\": ", absl_view(reason))));
}

absl::Status input_not_object_error(std::string_view flow, std::string_view step,
                                    std::string_view json_type) {
  return permanent(absl::InvalidArgumentError(
      absl::StrCat(where(flow, step), "expected an object of dependency outputs as input, got ",
                   absl_view(json_type))));
}

absl::Status element_conversion_error(std::string_view flow, std::string_view step, int task_index,
                                      std::string_view reason) {
  return permanent(absl::InvalidArgumentError(
      absl::StrCat(where(flow, step), "cannot convert the map element at index ", task_index, ": ",
                   absl_view(reason))));
}

absl::Status output_conversion_error(std::string_view flow, std::string_view step,
                                     std::string_view reason) {
  return permanent(absl::InvalidArgumentError(absl::StrCat(
      where(flow, step), "cannot convert the handler's result to JSON: ", absl_view(reason))));
}

absl::Status check_output(std::string_view flow, std::string_view step,
                          const nlohmann::json& output) {
  std::optional<internal::JsonProblem> problem = internal::json_problem(output);
  if (!problem) return absl::OkStatus();
  return output_conversion_error(flow, step, absl::StrCat("the result ", problem->text));
}

namespace {

// The one callable type behind every typed StepHandler.
class SharedHandler {
 public:
  explicit SharedHandler(std::shared_ptr<const TypedHandlerBase> handler)
      : handler_(std::move(handler)) {}

  absl::StatusOr<nlohmann::json> operator()(const nlohmann::json& input, Context& ctx) const {
    try {
      return handler_->run(input, ctx);
    } catch (const InputError& e) {
      return e.status;
    } catch (const OutputError& e) {
      return e.status;
    } catch (const std::exception& e) {
      return absl::UnknownError(e.what());
    } catch (...) {
      return absl::UnknownError("the handler threw an exception that is not a std::exception");
    }
  }

 private:
  std::shared_ptr<const TypedHandlerBase> handler_;
};

}  // namespace

StepHandler to_step_handler(std::unique_ptr<const TypedHandlerBase> handler) {
  return SharedHandler(std::shared_ptr<const TypedHandlerBase>(std::move(handler)));
}

}  // namespace pgflow::detail
