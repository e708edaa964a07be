// A loopback TCP proxy the soak controls: it accepts on 127.0.0.1:port() and forwards each
// connection to 127.0.0.1:upstream_port, byte for byte. cut() closes every live connection at
// once (both ends see the connection end, as when a network path or a pooler drops it). While
// the server is down, accepted connections are closed at once (the client sees the connection
// end during its handshake).
//
// Two relay threads per connection (one per direction) with blocking I/O; finished
// connections are reaped by the accept thread.
#ifndef PGFLOW_TESTS_SOAK_PROXY_H_
#define PGFLOW_TESTS_SOAK_PROXY_H_

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <thread>

#include "absl/status/statusor.h"

namespace pgflow::soak {

class TcpProxy {
 public:
  // Listens on a free port in 20000..31999 (below the ephemeral range, as scripts/pgcluster).
  static absl::StatusOr<std::unique_ptr<TcpProxy>> start(int upstream_port);
  ~TcpProxy();  // stops accepting, cuts every connection, joins every thread

  int port() const { return port_; }
  // Ends every live connection; returns how many there were.
  int cut();
  std::int64_t accepted() const { return accepted_.load(); }
  std::int64_t refused() const { return refused_.load(); }  // accepted while the server was down

 private:
  struct Link {
    int client = -1;
    int server = -1;
    std::thread up;    // client -> server
    std::thread down;  // server -> client
    std::atomic<int> finished{0};
  };

  TcpProxy(int listen_fd, int port, int upstream_port);
  void accept_loop();
  void reap_finished();
  static void relay(Link& link, int from, int to);

  const int listen_fd_;
  const int port_;
  const int upstream_port_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::int64_t> accepted_{0};
  std::atomic<std::int64_t> refused_{0};
  std::mutex mu_;
  std::list<std::unique_ptr<Link>> links_;  // guarded by mu_
  std::thread acceptor_;
};

}  // namespace pgflow::soak

#endif  // PGFLOW_TESTS_SOAK_PROXY_H_
