// The soak's producer: starts runs of the soak flow at a steady rate, directly against the
// server (not through the proxy), with inputs whose output the driver can compute. Each start
// has a run id chosen up front, so a start whose outcome is unknown (the server restarted
// during the call) is retried with the same id until it succeeds or says the run exists
// (kAlreadyExists): every run recorded here was started exactly once.
#ifndef PGFLOW_TESTS_SOAK_PRODUCER_H_
#define PGFLOW_TESTS_SOAK_PRODUCER_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "pgflow/client.h"
#include "soak_flow.h"

namespace pgflow::soak {

struct StartedRun {
  std::string run_id;
  SoakInput input;
};

class Producer {
 public:
  struct Counts {
    std::int64_t started = 0;          // runs recorded
    std::int64_t start_errors = 0;     // failed start calls (then retried with the same id)
    std::int64_t already_existed = 0;  // retries that found the run started by an earlier call
    std::int64_t abandoned = 0;        // starts given up after 2 minutes of errors
    std::map<std::string, std::int64_t> errors_by_code;
  };

  // Starts producing `rate` runs per second at once; `seed` chooses the inputs.
  Producer(pgflow::Client client, double rate, std::uint64_t seed);
  ~Producer();  // stops
  void stop();  // returns once no start is in flight

  std::vector<StartedRun> runs() const;
  // Runs whose start was abandoned: they may or may not exist.
  std::vector<StartedRun> abandoned() const;
  Counts counts() const;

 private:
  void produce(std::stop_token stop);
  // Starts one run, retrying with the same id; false when it gave up.
  bool start_one(const StartedRun& run);

  pgflow::Client client_;
  const double rate_;
  std::mt19937_64 random_;
  mutable std::mutex mu_;
  std::vector<StartedRun> runs_;       // guarded by mu_
  std::vector<StartedRun> abandoned_;  // guarded by mu_
  Counts counts_;                      // guarded by mu_
  std::jthread thread_;
};

}  // namespace pgflow::soak

#endif  // PGFLOW_TESTS_SOAK_PRODUCER_H_
