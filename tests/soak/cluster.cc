#include "cluster.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "pg/connection.h"
#include "testing/command.h"

namespace pgflow::soak {

namespace {

constexpr char kPgBin[] = "/usr/lib/postgresql/15/bin";

using pgflow::testing::run_command;
using pgflow::testing::shell_quote;

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return std::string(absl::StripAsciiWhitespace(line));
}

absl::Status command_failed(const std::string& what, const pgflow::testing::CommandResult& r) {
  return absl::InternalError(
      absl::StrCat(what, " failed (exit ", r.exit_code, "): ", r.err, r.out));
}

}  // namespace

Cluster::Cluster(std::string source_dir, std::string dir)
    : source_dir_(std::move(source_dir)), dir_(std::move(dir)) {}

std::string Cluster::home_dir() const {
  const std::string location = first_line(dir_ + "/location");
  return location.empty() ? dir_ : location;
}

std::string Cluster::data_dir() const { return home_dir() + "/data"; }

absl::Status Cluster::start(bool synchronous_commit) {
  started_ = true;
  const auto r = run_command(absl::StrCat(shell_quote(source_dir_ + "/scripts/pgcluster"),
                                          " start ", shell_quote(dir_), " --fast"));
  if (r.exit_code != 0) return command_failed("pgcluster start", r);
  url_ = first_line(dir_ + "/url");
  if (!absl::SimpleAtoi(first_line(dir_ + "/port"), &port_)) {
    return absl::InternalError("pgcluster start wrote no port to " + dir_ + "/port");
  }
  if (!synchronous_commit) return absl::OkStatus();
  absl::StatusOr<pg::Connection> conn = pg::Connection::open(url_, "pgflow-soak");
  if (!conn.ok()) return conn.status();
  for (const char* sql : {"alter system set synchronous_commit = on", "select pg_reload_conf()"}) {
    if (absl::StatusOr<pg::Result> done = conn->exec(sql); !done.ok()) return done.status();
  }
  return absl::OkStatus();
}

absl::Status Cluster::migrate(const std::string& pgflow_cli) const {
  const auto r =
      run_command(absl::StrCat(shell_quote(pgflow_cli), " migrate --database ", shell_quote(url_)));
  return r.exit_code == 0 ? absl::OkStatus() : command_failed("pgflow migrate", r);
}

absl::Status Cluster::restart_immediate() const {
  // As scripts/pgcluster: PostgreSQL refuses to run as root, so root runs it as "postgres".
  const std::string as_server = geteuid() == 0 ? "runuser -u postgres -- " : "";
  // pg_ctl restart reuses the options the server was started with (postmaster.opts: the port).
  const auto r = run_command(absl::StrCat(as_server, kPgBin, "/pg_ctl -D ", shell_quote(data_dir()),
                                          " -l ", shell_quote(home_dir() + "/server.log"),
                                          " -m immediate -w -t 120 restart"));
  return r.exit_code == 0 ? absl::OkStatus() : command_failed("pg_ctl restart -m immediate", r);
}

void Cluster::copy_log(const std::string& path) const {
  std::error_code ignored;
  std::filesystem::copy_file(home_dir() + "/server.log", path,
                             std::filesystem::copy_options::overwrite_existing, ignored);
}

void Cluster::remove() {
  if (!started_) return;
  started_ = false;
  run_command(
      absl::StrCat(shell_quote(source_dir_ + "/scripts/pgcluster"), " remove ", shell_quote(dir_)));
}

}  // namespace pgflow::soak
