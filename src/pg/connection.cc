#include "pg/connection.h"

#include <libpq-fe.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "pg/error.h"

namespace pgflow::pg {
namespace {

// libpq error text ends with a newline; statuses should not.
std::string trimmed(const char* text) {
  std::string s = text ? text : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

absl::Status status_from_result(const PGresult* result, PGconn* conn) {
  if (result == nullptr) return database_error("", trimmed(PQerrorMessage(conn)));
  const char* sqlstate = PQresultErrorField(result, PG_DIAG_SQLSTATE);
  std::string message = trimmed(PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY));
  if (message.empty()) message = trimmed(PQresultErrorMessage(result));
  // An integrity violation's DETAIL quotes row data ("Failing row contains (...)", "Key
  // (...)=(...)"): inputs and outputs, which statuses never carry (they are logged).
  const char* detail = PQresultErrorField(result, PG_DIAG_MESSAGE_DETAIL);
  if (detail != nullptr && !(sqlstate != nullptr && std::string_view(sqlstate).starts_with("23"))) {
    absl::StrAppend(&message, " (", trimmed(detail), ")");
  }
  if (const char* hint = PQresultErrorField(result, PG_DIAG_MESSAGE_HINT)) {
    absl::StrAppend(&message, " hint: ", trimmed(hint));
  }
  // A missing SQLSTATE means libpq itself failed: the connection is gone.
  return database_error(sqlstate ? sqlstate : "", message);
}

// Notices (e.g. "schema already exists, skipping") are not errors; callers that care use
// RAISE ... and read results instead.
void ignore_notice(void*, const PGresult*) {}

// Closes an eventfd-based stop signal when the wait ends.
struct EventFd {
  int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  ~EventFd() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

// ---- Result ----

void Result::Clear::operator()(PGresult* r) const { PQclear(r); }

Result::Result(PGresult* result) : result_(result) {}

int Result::rows() const { return result_ ? PQntuples(result_.get()) : 0; }
int Result::columns() const { return result_ ? PQnfields(result_.get()) : 0; }

int Result::column(std::string_view name) const {
  if (!result_) return -1;
  return PQfnumber(result_.get(), std::string(name).c_str());
}

bool Result::is_null(int row, int col) const {
  return !result_ || PQgetisnull(result_.get(), row, col) == 1;
}

std::string_view Result::text(int row, int col) const {
  if (is_null(row, col)) return {};
  return {PQgetvalue(result_.get(), row, col),
          static_cast<size_t>(PQgetlength(result_.get(), row, col))};
}

absl::StatusOr<std::int64_t> Result::int64(int row, int col) const {
  std::string_view s = text(row, col);
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) {
    return absl::InternalError(
        absl::StrCat("expected an integer in column ", col, ", got '", std::string(s), "'"));
  }
  return value;
}

absl::StatusOr<bool> Result::boolean(int row, int col) const {
  std::string_view s = text(row, col);
  if (s == "t") return true;
  if (s == "f") return false;
  return absl::InternalError(absl::StrCat("expected a boolean in column ", col));
}

// ---- Connection ----

Connection::Connection(PGconn* conn) : conn_(conn) {}

Connection::Connection(Connection&& other) noexcept : conn_(std::exchange(other.conn_, nullptr)) {}

Connection& Connection::operator=(Connection&& other) noexcept {
  if (this != &other) {
    if (conn_) PQfinish(conn_);
    conn_ = std::exchange(other.conn_, nullptr);
  }
  return *this;
}

Connection::~Connection() {
  if (conn_) PQfinish(conn_);
}

absl::StatusOr<Connection> Connection::open(std::string_view conninfo,
                                            std::string_view application_name) {
  std::string info(conninfo);
  // libpq reads the string up to its first NUL byte: the rest would be ignored silently.
  if (info.find('\0') != std::string::npos) {
    return absl::InvalidArgumentError("pgflow: the connection string contains a NUL byte");
  }
  // libpq's parse errors quote the offending part, which may be the password: check the
  // string first and report it without libpq's text.
  char* parse_error = nullptr;
  PQconninfoOption* parsed = PQconninfoParse(info.c_str(), &parse_error);
  if (parsed == nullptr) {
    if (parse_error) PQfreemem(parse_error);
    return absl::InvalidArgumentError(
        "pgflow: the connection string cannot be parsed (are special characters in the password "
        "percent-encoded?)");
  }
  PQconninfoFree(parsed);

  // Defaults first: keywords of the connection string (expanded from "dbname") override them.
  // Keepalives and tcp_user_timeout bound how long a call can hang on a peer that vanished
  // without closing the connection.
  std::string app(application_name);
  const char* keys[] = {"application_name",
                        "connect_timeout",
                        "keepalives",
                        "keepalives_idle",
                        "keepalives_interval",
                        "keepalives_count",
                        "tcp_user_timeout",
                        "dbname",
                        nullptr};
  const char* values[] = {app.c_str(), "10", "1", "30", "10", "3", "60000", info.c_str(), nullptr};
  PGconn* conn = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  if (conn == nullptr) return absl::ResourceExhaustedError("libpq could not allocate a connection");
  if (PQstatus(conn) != CONNECTION_OK) {
    const std::string error = trimmed(PQerrorMessage(conn));
    PQfinish(conn);
    return connection_failure(describe_conninfo(conninfo), error);
  }
  PQsetNoticeReceiver(conn, ignore_notice, nullptr);
  return Connection(conn);
}

absl::StatusOr<Result> Connection::exec(std::string_view sql, const std::vector<Param>& params) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const Param& p : params) {
    // libpq sends a text parameter up to its first NUL byte: the rest would vanish silently
    // (a run id followed by a NUL and junk would name that run). PostgreSQL text cannot hold a
    // NUL anyway. The value is not shown: it may be anything, a secret included.
    if (const std::size_t nul = p ? p->find('\0') : std::string::npos; nul != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "pgflow: statement parameter $", values.size() + 1, " contains a NUL byte (at byte ", nul,
          "), which PostgreSQL text cannot hold"));
    }
    values.push_back(p ? p->c_str() : nullptr);
  }
  if (sql.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError(
        "pgflow: the statement contains a NUL byte, which PostgreSQL text cannot hold");
  }
  std::string statement(sql);
  PGresult* raw = PQexecParams(conn_, statement.c_str(), static_cast<int>(values.size()),
                               /*paramTypes=*/nullptr, values.data(), /*paramLengths=*/nullptr,
                               /*paramFormats=*/nullptr, /*resultFormat=*/0);
  Result result(raw);
  ExecStatusType st = raw ? PQresultStatus(raw) : PGRES_FATAL_ERROR;
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) return status_from_result(raw, conn_);
  return result;
}

absl::Status Connection::exec_script(std::string_view sql) {
  std::string script(sql);
  PGresult* raw = PQexec(conn_, script.c_str());
  Result result(raw);
  ExecStatusType st = raw ? PQresultStatus(raw) : PGRES_FATAL_ERROR;
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK && st != PGRES_EMPTY_QUERY) {
    return status_from_result(raw, conn_);
  }
  return absl::OkStatus();
}

absl::Status Connection::listen(std::string_view channel) {
  return exec(absl::StrCat("LISTEN ", quote_identifier(channel))).status();
}

std::optional<Notification> Connection::take_notification() {
  PGnotify* n = PQnotifies(conn_);
  if (n == nullptr) return std::nullopt;
  Notification out{n->relname ? n->relname : "", n->extra ? n->extra : "", n->be_pid};
  PQfreemem(n);
  return out;
}

absl::StatusOr<std::optional<Notification>> Connection::wait_notification(
    std::chrono::steady_clock::time_point deadline, std::stop_token stop) {
  if (auto n = take_notification()) return n;
  EventFd wake;
  if (wake.fd < 0) return absl::InternalError("eventfd failed");
  // A stop request writes to the eventfd and so interrupts poll() at once.
  std::stop_callback on_stop(stop, [&wake] {
    std::uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(wake.fd, &one, sizeof one);
  });
  const int sock = PQsocket(conn_);
  if (sock < 0) return database_error("", "connection lost");
  while (!stop.stop_requested()) {
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return std::optional<Notification>();
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
    pollfd fds[2] = {{sock, POLLIN, 0}, {wake.fd, POLLIN, 0}};
    int rc = poll(fds, 2, static_cast<int>(std::min<long long>(left + 1, 60'000)));
    if (rc < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(absl::StrCat("poll failed: ", std::strerror(errno)));
    }
    if (fds[0].revents != 0) {
      if (PQconsumeInput(conn_) == 0) return database_error("", trimmed(PQerrorMessage(conn_)));
      if (auto n = take_notification()) return n;
    }
  }
  return std::optional<Notification>();
}

bool Connection::healthy() const { return conn_ != nullptr && PQstatus(conn_) == CONNECTION_OK; }

bool Connection::failed_transaction() const {
  return conn_ != nullptr && PQtransactionStatus(conn_) == PQTRANS_INERROR;
}

bool Connection::idle() const { return healthy() && PQtransactionStatus(conn_) == PQTRANS_IDLE; }

int Connection::backend_pid() const { return conn_ ? PQbackendPID(conn_) : 0; }

std::string describe_conninfo(std::string_view conninfo) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(std::string(conninfo).c_str(), &error);
  if (options == nullptr) {
    if (error) PQfreemem(error);
    return "<unparsable connection string>";
  }
  std::string out;
  for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    if (o->val == nullptr || o->val[0] == '\0') continue;
    std::string_view key = o->keyword;
    if (key != "host" && key != "hostaddr" && key != "port" && key != "dbname" && key != "user") {
      continue;  // password, sslkey and friends are never shown
    }
    if (!out.empty()) out += ' ';
    absl::StrAppend(&out, o->keyword, "=", o->val);
  }
  PQconninfoFree(options);
  return out.empty() ? "<default connection>" : out;
}

std::string quote_identifier(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::optional<std::string> connection_string_or_env(std::string_view configured) {
  if (!configured.empty()) return std::string(configured);
  if (const char* env = std::getenv("DATABASE_URL"); env != nullptr && *env != '\0')
    return std::string(env);
  return std::nullopt;
}

std::string no_database(std::string_view setting) {
  return absl::StrCat("no database: ", absl::string_view(setting.data(), setting.size()),
                      " is empty and DATABASE_URL is not set");
}

absl::Status require_pgflow_schema(Connection& conn) {
  absl::StatusOr<Result> installed = conn.exec("select to_regclass('pgflow.flows') is not null");
  if (!installed.ok()) return installed.status();
  if (installed->scalar() != "t")
    return absl::FailedPreconditionError(absl::StrCat("pgflow: ", kNoPgflowSchema));
  return absl::OkStatus();
}

absl::Status in_transaction(Connection& conn, absl::FunctionRef<absl::Status()> body) {
  if (absl::Status s = conn.exec("begin").status(); !s.ok()) return s;
  absl::Status status = body();
  if (status.ok() && conn.failed_transaction()) {
    status = absl::AbortedError(
        "pgflow: a statement of the transaction failed, so it was rolled back (the body ignored "
        "that error)");
  }
  if (!status.ok()) {
    (void)conn.exec("rollback");  // the connection may be gone; the server rolls back then
    return status;
  }
  return conn.exec("commit").status();
}

}  // namespace pgflow::pg
