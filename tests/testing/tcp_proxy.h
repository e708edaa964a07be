// A loopback TCP proxy tests control: it accepts on 127.0.0.1:port() and forwards each
// connection to 127.0.0.1:upstream_port, byte for byte. cut() closes every live connection at
// once (both ends see the connection end, as when a network path or a pooler drops it). While
// the server is down, accepted connections are closed at once (the client sees the connection
// end during its handshake). While silent, accepted connections are held open and never
// answered (a host that drops packets: the client waits for its connect_timeout).
// cut_after_commit_of() cuts one connection at an exact point: after the server committed a
// given statement, before the client has seen any of its reply. cut_once_sent() cuts one right
// after a given statement went to the server, which runs it with nobody to answer, and refuses
// new connections until accept_again().
//
// Two relay threads per connection (one per direction) with blocking I/O; finished
// connections are reaped by the accept thread. Used by the fault soak (tests/soak) and by
// database tests of lost connections.
#ifndef PGFLOW_TESTS_TESTING_TCP_PROXY_H_
#define PGFLOW_TESTS_TESTING_TCP_PROXY_H_

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/statusor.h"

namespace pgflow::testing {

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
  // Silent: connections accepted from now on get no answer and reach no server (cut() and the
  // destructor close them).
  void set_silent(bool silent) { silent_ = silent; }

  // Arms a one-shot fault: the first connection that sends a statement containing
  // `statement_part` (after this call) is cut when the server's ReadyForQuery for it arrives,
  // which PostgreSQL sends only once the statement's transaction has committed; nothing of the
  // reply reaches the client, which sees the connection end while waiting for it. The proxy
  // reads PostgreSQL's message framing for this, so such connections must not use TLS or GSS
  // encryption (sslmode=disable gssencmode=disable).
  void cut_after_commit_of(std::string statement_part);
  // How many connections the armed fault has cut so far.
  int cuts_after_commit() const { return cuts_after_commit_.load(); }
  // Arms a one-shot fault: the first connection that sends a statement containing
  // `statement_part` (after this call) is cut as soon as that statement went to the server,
  // which runs it and may commit it after the client saw the connection end. From the cut on,
  // connections are accepted and closed at once (as while the server is down) until
  // accept_again(), so a test decides when the client may reconnect. Same framing needs as
  // cut_after_commit_of().
  void cut_once_sent(std::string statement_part);
  int cuts_once_sent() const { return cuts_once_sent_.load(); }
  void accept_again() { refusing_ = false; }

 private:
  // PostgreSQL's server-to-client framing: a type byte and a length, except the one-byte
  // answers to SSL and GSS encryption requests during the handshake.
  struct ServerFraming {
    unsigned char header[5] = {};
    int header_len = 0;
    std::int64_t body_left = -1;  // -1: reading a header
    std::atomic<int> single_byte_replies{0};
  };
  struct Link {
    int client = -1;
    int server = -1;
    std::thread up;    // client -> server
    std::thread down;  // server -> client
    std::atomic<int> finished{0};
    std::atomic<bool> cut_when_ready{false};  // the armed statement was sent on this link
    std::atomic<bool> withhold{false};        // cut_once_sent(): nothing more reaches the client
    ServerFraming framing;
    bool client_handshake_done = false;  // the client's StartupMessage went through
    std::string client_tail;  // the end of the last client chunk, for statements split in two
  };

  TcpProxy(int listen_fd, int port, int upstream_port);
  void accept_loop();
  void reap_finished();
  void relay_up(Link& link);
  void relay_down(Link& link);
  // Whether a client chunk carries the armed statement (which it then disarms).
  enum class Armed { kNone, kAfterCommit, kOnceSent };
  Armed takes_armed_statement(Link& link, const char* data, std::size_t size);
  void arm(std::string statement_part, bool once_sent);
  // Follows the server's messages in a chunk; true when one of them is a ReadyForQuery.
  static bool ready_for_query_in(ServerFraming& framing, const char* data, std::size_t size);
  static void end(Link& link);

  const int listen_fd_;
  const int port_;
  const int upstream_port_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> silent_{false};
  std::atomic<bool> refusing_{false};  // since a cut_once_sent() cut, until accept_again()
  std::atomic<std::int64_t> accepted_{0};
  std::atomic<std::int64_t> refused_{0};
  std::atomic<int> cuts_after_commit_{0};
  std::atomic<int> cuts_once_sent_{0};
  std::mutex mu_;
  std::list<std::unique_ptr<Link>> links_;  // guarded by mu_
  std::list<int> unanswered_;               // guarded by mu_: clients accepted while silent
  std::string armed_;                       // guarded by mu_; empty: no fault armed
  bool armed_once_sent_ = false;            // guarded by mu_: which fault armed_ is for
  std::thread acceptor_;
};

}  // namespace pgflow::testing

#endif  // PGFLOW_TESTS_TESTING_TCP_PROXY_H_
