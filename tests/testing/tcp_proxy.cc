#include "testing/tcp_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace pgflow::testing {

namespace {

sockaddr_in loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

void no_delay(int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// A connection to the server, or -1 when it is down.
int connect_upstream(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const sockaddr_in addr = loopback(port);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  no_delay(fd);
  return fd;
}

bool write_all(int fd, const char* data, ssize_t size) {
  while (size > 0) {
    // send, not write: a peer gone meanwhile is an error here, not a SIGPIPE for the driver.
    const ssize_t n = send(fd, data, static_cast<size_t>(size), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= n;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TcpProxy>> TcpProxy::start(int upstream_port) {
  std::random_device seed;
  std::mt19937 pick(seed());
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int port = 20000 + static_cast<int>(pick() % 12000);
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    const sockaddr_in addr = loopback(port);
    if (bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0 &&
        listen(fd, 128) == 0) {
      return std::unique_ptr<TcpProxy>(new TcpProxy(fd, port, upstream_port));
    }
    close(fd);
  }
  return absl::UnavailableError("proxy: no free port in 20000..31999 after 100 attempts");
}

TcpProxy::TcpProxy(int listen_fd, int port, int upstream_port)
    : listen_fd_(listen_fd),
      port_(port),
      upstream_port_(upstream_port),
      acceptor_([this] { accept_loop(); }) {}

TcpProxy::~TcpProxy() {
  stopping_ = true;
  acceptor_.join();
  close(listen_fd_);
  cut();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& link : links_) {
    link->up.join();
    link->down.join();
    close(link->client);
    close(link->server);
  }
}

void TcpProxy::accept_loop() {
  while (!stopping_) {
    reap_finished();
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    const int client = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    ++accepted_;
    if (silent_) {
      std::lock_guard<std::mutex> lock(mu_);
      unanswered_.push_back(client);
      continue;
    }
    const int server = refusing_ ? -1 : connect_upstream(upstream_port_);
    if (server < 0) {
      ++refused_;
      close(client);
      continue;
    }
    no_delay(client);
    auto link = std::make_unique<Link>();
    link->client = client;
    link->server = server;
    Link& l = *link;
    std::lock_guard<std::mutex> lock(mu_);
    l.up = std::thread([this, &l] { relay_up(l); });
    l.down = std::thread([this, &l] { relay_down(l); });
    links_.push_back(std::move(link));
  }
}

void TcpProxy::cut_after_commit_of(std::string statement_part) {
  arm(std::move(statement_part), false);
}

void TcpProxy::cut_once_sent(std::string statement_part) { arm(std::move(statement_part), true); }

void TcpProxy::arm(std::string statement_part, bool once_sent) {
  std::lock_guard<std::mutex> lock(mu_);
  armed_ = std::move(statement_part);
  armed_once_sent_ = once_sent;
}

TcpProxy::Armed TcpProxy::takes_armed_statement(Link& link, const char* data, std::size_t size) {
  std::string window = link.client_tail;
  window.append(data, size);
  std::lock_guard<std::mutex> lock(mu_);
  const bool found = !armed_.empty() && window.find(armed_) != std::string::npos;
  if (found) armed_.clear();
  const std::size_t keep = std::max<std::size_t>(armed_.size(), 256);
  link.client_tail = window.size() > keep ? window.substr(window.size() - keep) : window;
  if (!found) return Armed::kNone;
  return armed_once_sent_ ? Armed::kOnceSent : Armed::kAfterCommit;
}

void TcpProxy::relay_up(Link& link) {
  char buffer[65536];
  for (;;) {
    const ssize_t n = read(link.client, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    // The handshake: length-prefixed messages without a type byte. An SSL or GSS encryption
    // request is answered with a single byte; the StartupMessage ends it.
    for (ssize_t at = 0; !link.client_handshake_done && at + 8 <= n;) {
      std::uint32_t length = 0;
      std::uint32_t code = 0;
      std::memcpy(&length, buffer + at, 4);
      std::memcpy(&code, buffer + at + 4, 4);
      length = ntohl(length);
      code = ntohl(code);
      if (code == 80877103 || code == 80877104) {
        ++link.framing.single_byte_replies;
      } else if (code != 80877102) {  // (a cancel request gets no reply at all)
        link.client_handshake_done = true;
      }
      if (length < 8) break;
      at += length;
    }
    // Set before the statement reaches the server, so before any byte of its reply exists.
    const Armed armed = link.client_handshake_done
                            ? takes_armed_statement(link, buffer, static_cast<std::size_t>(n))
                            : Armed::kNone;
    if (armed == Armed::kAfterCommit) link.cut_when_ready = true;
    if (armed == Armed::kOnceSent) {
      // Before the statement leaves: no byte of its reply may reach the client, and the
      // client may not reconnect before it sees the cut.
      link.withhold = true;
      refusing_ = true;
    }
    if (!write_all(link.server, buffer, n)) break;
    if (armed == Armed::kOnceSent) {
      ++cuts_once_sent_;
      break;
    }
  }
  end(link);
}

void TcpProxy::relay_down(Link& link) {
  char buffer[65536];
  for (;;) {
    const ssize_t n = read(link.server, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (link.withhold) continue;  // the cut of cut_once_sent() is on its way
    const bool ready = ready_for_query_in(link.framing, buffer, static_cast<std::size_t>(n));
    if (link.cut_when_ready) {
      // The armed statement's reply is withheld; at its ReadyForQuery (sent after the commit)
      // the connection ends.
      if (ready) {
        ++cuts_after_commit_;
        break;
      }
      continue;
    }
    if (!write_all(link.client, buffer, n)) break;
  }
  end(link);
}

bool TcpProxy::ready_for_query_in(ServerFraming& f, const char* data, std::size_t size) {
  bool ready = false;
  std::size_t at = 0;
  while (at < size) {
    if (f.body_left < 0 && f.header_len == 0 && f.single_byte_replies > 0) {
      --f.single_byte_replies;
      ++at;
      continue;
    }
    if (f.body_left < 0) {
      f.header[f.header_len++] = static_cast<unsigned char>(data[at++]);
      if (f.header_len < 5) continue;
      std::uint32_t length = 0;
      std::memcpy(&length, f.header + 1, 4);
      f.body_left = static_cast<std::int64_t>(ntohl(length)) - 4;
    } else {
      const std::size_t take =
          std::min<std::size_t>(static_cast<std::size_t>(f.body_left), size - at);
      at += take;
      f.body_left -= static_cast<std::int64_t>(take);
    }
    if (f.body_left == 0) {
      ready = ready || f.header[0] == 'Z';
      f.header_len = 0;
      f.body_left = -1;
    }
  }
  return ready;
}

void TcpProxy::end(Link& link) {
  // Either end closed (or was cut): end both, which also ends the other direction's thread.
  shutdown(link.client, SHUT_RDWR);
  shutdown(link.server, SHUT_RDWR);
  ++link.finished;
}

void TcpProxy::reap_finished() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = links_.begin(); it != links_.end();) {
    Link& link = **it;
    if (link.finished.load() < 2) {
      ++it;
      continue;
    }
    link.up.join();
    link.down.join();
    close(link.client);
    close(link.server);
    it = links_.erase(it);
  }
}

int TcpProxy::cut() {
  std::lock_guard<std::mutex> lock(mu_);
  int live = static_cast<int>(unanswered_.size());
  for (int client : unanswered_) close(client);
  unanswered_.clear();
  for (auto& link : links_) {
    if (link->finished.load() > 0) continue;
    ++live;
    shutdown(link->client, SHUT_RDWR);
    shutdown(link->server, SHUT_RDWR);
  }
  return live;
}

}  // namespace pgflow::testing
