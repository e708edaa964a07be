// Prints the flow shape (the JSON that pgflow.ensure_flow_compiled receives) of every example
// flow, after checking it with pgflow::validate.
//
//   ./shape_dump            all flows
//   ./shape_dump onboardUser
#include <cstdio>
#include <string_view>

#include "flows/doc_snippets.h"
#include "flows/onboarding.h"
#include "pgflow/flow.h"
#include "pgflow/flow_definition.h"

namespace {

int dump(const pgflow::FlowDefinition& flow, std::string_view only) {
  if (!only.empty() && only != flow.slug) return 0;
  if (absl::Status status = pgflow::validate(flow); !status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    return 1;
  }
  std::printf("%s %s\n", flow.slug.c_str(), pgflow::shape_of(flow).dump().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view only = argc > 1 ? argv[1] : "";
  int failures = 0;
  failures += dump(onboarding::flow.definition(), only);
  failures += dump(doc_snippets::resize.definition(), only);
  failures += dump(doc_snippets::orders.definition(), only);
  failures += dump(doc_snippets::tuned.definition(), only);
  failures += dump(doc_snippets::resize_per_step.definition(), only);
  return failures == 0 ? 0 : 1;
}
