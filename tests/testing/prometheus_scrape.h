// Reading Prometheus metrics in tests: an HTTP GET over a plain POSIX socket (no HTTP client
// dependency) and one sample of a text exposition.
#ifndef PGFLOW_TESTS_TESTING_PROMETHEUS_SCRAPE_H_
#define PGFLOW_TESTS_TESTING_PROMETHEUS_SCRAPE_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace pgflow::testing {

// GET http://127.0.0.1:<port><path> (HTTP/1.0: the server closes when done): the whole
// response, status line and headers included.
absl::StatusOr<std::string> http_get(int port, const std::string& path);

// The value of `series`, written as the exposition writes it (e.g.
// `pgflow_tasks_claimed_total{flow="f"}`), in `text`; nullopt when no line has it.
std::optional<double> sample(const std::string& text, const std::string& series);

}  // namespace pgflow::testing

#endif  // PGFLOW_TESTS_TESTING_PROMETHEUS_SCRAPE_H_
