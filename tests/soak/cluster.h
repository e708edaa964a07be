// The soak's own PostgreSQL cluster (never the shared test cluster: the soak restarts it).
// Created and started with scripts/pgcluster in a directory of the soak's, migrated with the
// `pgflow` program, restarted in immediate mode (a crash: no shutdown checkpoint, every
// backend killed, crash recovery on start) with pg_ctl run as the server's user, and removed.
#ifndef PGFLOW_TESTS_SOAK_CLUSTER_H_
#define PGFLOW_TESTS_SOAK_CLUSTER_H_

#include <string>

#include "absl/status/status.h"

namespace pgflow::soak {

class Cluster {
 public:
  // `source_dir`: the checkout (for scripts/pgcluster); `dir`: the cluster's directory.
  Cluster(std::string source_dir, std::string dir);

  // Creates and starts the cluster (pgcluster start DIR --fast) and turns synchronous_commit
  // back on: --fast turns it off, and an immediate restart then loses commits that were
  // already acknowledged (runs a client started, results a worker reported), which is not a
  // fault of pgflow's. fsync stays off: an immediate restart is not an OS crash.
  // `synchronous_commit` false keeps --fast's setting (the soak's check of its own checks: it
  // must then report lost runs).
  absl::Status start(bool synchronous_commit);
  // Installs the schema with `pgflow migrate`.
  absl::Status migrate(const std::string& pgflow_cli) const;
  // pg_ctl restart -m immediate, waiting until the server accepts connections again.
  absl::Status restart_immediate() const;
  // Copies the server log to `path` (for a failed soak's evidence).
  void copy_log(const std::string& path) const;
  // The server log (appended to across restarts).
  std::string log_path() const { return home_dir() + "/server.log"; }
  // pgcluster remove DIR: stops the server and deletes its data. Safe to call twice.
  void remove();

  int port() const { return port_; }
  const std::string& url() const { return url_; }

 private:
  std::string data_dir() const;  // where pgcluster put data/ (DIR, or DIR/location's folder)
  std::string home_dir() const;

  std::string source_dir_;
  std::string dir_;
  std::string url_;
  int port_ = 0;
  bool started_ = false;
};

}  // namespace pgflow::soak

#endif  // PGFLOW_TESTS_SOAK_CLUSTER_H_
