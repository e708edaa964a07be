// A DatabaseTest with a connected pgflow::Client, for tests of the client and of run control.
#ifndef PGFLOW_TESTS_TESTING_CLIENT_TEST_BASE_H_
#define PGFLOW_TESTS_TESTING_CLIENT_TEST_BASE_H_

#include <optional>

#include "gtest/gtest.h"
#include "pgflow/client.h"
#include "pgflow/worker.h"
#include "testing/database_test.h"
#include "testing/status_matchers.h"
#include "testing/worker_harness.h"

namespace pgflow::testing {

class ClientTestBase : public DatabaseTest {
 protected:
  void SetUp() override {
    DatabaseTest::SetUp();
    if (HasFatalFailure()) return;
    auto client = Client::connect({.connection_string = db_->url()});
    ASSERT_TRUE(client.ok()) << client.status();
    client_.emplace(std::move(*client));
  }
  // Compiles `flow` by starting and stopping a worker, so runs can be started without one.
  template <typename F>
  void compile(const F& flow) {
    auto w = EdgeWorker::start(flow, test_worker_config(db_->url()));
    ASSERT_TRUE(w.ok()) << w.status();
    w->stop();
    ASSERT_THAT(w->wait(), IsOk());
  }

  std::optional<Client> client_;
};

}  // namespace pgflow::testing

#endif  // PGFLOW_TESTS_TESTING_CLIENT_TEST_BASE_H_
