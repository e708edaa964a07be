// A connection string that libpq refuses by itself can never work: the worker and the client
// fail at once with kInvalidArgument naming the option, instead of retrying it as an
// unreachable database for their whole startup_timeout / connect_timeout. No server needed.
#include <chrono>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pgflow/client.h"
#include "pgflow/flow.h"
#include "pgflow/worker.h"
#include "testing/status_matchers.h"
#include "testing/worker_harness.h"

namespace pgflow {
namespace {

using pgflow::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

inline const auto kFlow = Flow<"connString", int>().step<"a">([](int x) { return x; });

TEST(ConnectionString, AValueLibpqRefusesFailsTheWorkerAtOnceNamingTheOption) {
  for (const char* conninfo : {"host=127.0.0.1 port=notaport", "host=127.0.0.1 sslmode=bogus",
                               "host=127.0.0.1 connect_timeout=soon"}) {
    SCOPED_TRACE(conninfo);
    pgflow::testing::LogRecorder logs;
    WorkerConfig config{.connection_string = conninfo, .startup_timeout = std::chrono::hours(1)};
    config.log_sink = logs.sink();
    EXPECT_THAT(EdgeWorker::start(kFlow, config),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         AllOf(HasSubstr("the connection string is invalid"),
                               Not(HasSubstr("password=")))));
    EXPECT_FALSE(logs.contains("database unreachable at startup; retrying")) << "nothing retried";
  }
}

TEST(ConnectionString, AValueLibpqRefusesFailsTheClientAtOnceWithoutThePassword) {
  EXPECT_THAT(
      Client::connect({.connection_string = "host=127.0.0.1 port=notaport password=s3cret",
                       .connect_timeout = std::chrono::hours(1)}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("\"notaport\""), HasSubstr("\"port\""), Not(HasSubstr("s3cret")))));
}

TEST(ConnectionString, AMalformedUriFailsAtOnceAndItsPasswordIsNotQuoted) {
  // libpq quotes the whole URI in this error, password included.
  EXPECT_THAT(Client::connect({.connection_string = "postgresql://app:s3cret@[::1/db",
                               .connect_timeout = std::chrono::hours(1)}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("cannot be parsed"), Not(HasSubstr("s3cret")))));
}

}  // namespace
}  // namespace pgflow
