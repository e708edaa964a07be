// Links against the installed pgflow::prometheus component and uses its public API.
#include <cstdio>
#include <memory>
#include <string>

#include "pgflow/prometheus.h"
#include "prometheus/registry.h"

int main() {
  auto registry = std::make_shared<prometheus::Registry>();
  absl::StatusOr<std::unique_ptr<pgflow::PrometheusMetrics>> prom =
      pgflow::PrometheusMetrics::create(registry);
  if (!prom.ok()) {
    std::fprintf(stderr, "%s\n", std::string(prom.status().message()).c_str());
    return 1;
  }
  (*prom)->worker_metrics("greetUsers")({pgflow::WorkerMetric::Kind::kCompleted, "hello", 1});
  std::printf("pgflow::prometheus: %zu metric families\n", registry->Collect().size());
  return registry->Collect().size() == 7 ? 0 : 1;
}
