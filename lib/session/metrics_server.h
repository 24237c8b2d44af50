// The scrape port of a long job (GPUIDLE_METRICS_PORT, docs/METRICS.md): a tiny HTTP server on
// 127.0.0.1 that answers GET /metrics with the text last published. It is built to be left
// running inside someone else's program: one background thread that serves up to
// kMaxConnections connections at once with poll() and non-blocking sockets, bounded requests
// and deadlines (a slow, idle or hostile client does not delay another's scrape, and the
// connections it holds are capped and dropped oldest first), no exception, no SIGPIPE.
//
//   GPUIDLE_ASSIGN_OR_RETURN(std::unique_ptr<MetricsServer> server, MetricsServer::Start(9400));
//   server->Publish(FormatPrometheusMetrics(report, labels));  // whenever the report changes
//   server.reset();                                            // stops and joins
#ifndef GPUIDLE_LIB_SESSION_METRICS_SERVER_H_
#define GPUIDLE_LIB_SESSION_METRICS_SERVER_H_

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/statusor.h"

namespace gpuidle::internal {

class MetricsServer {
 public:
  // The request line and headers may be this long; a longer request is answered 431.
  static constexpr size_t kMaxRequestBytes = 8 * 1024;
  // From its connection, a client has kFirstByteTimeout to send the first byte of its request
  // and kReadTimeout for the whole request line and headers (then 408); from the first byte of
  // the answer, kWriteTimeout to take it (then the connection is closed).
  static constexpr std::chrono::milliseconds kFirstByteTimeout{500};
  static constexpr std::chrono::milliseconds kReadTimeout{1000};
  static constexpr std::chrono::milliseconds kWriteTimeout{2000};
  // Connections open at once. A connection past it closes the oldest one: a scrape is answered
  // within a turn of the loop, so the oldest are those idle, slow or not reading their answer.
  // There is no cap per peer: every client of a loopback port is 127.0.0.1 (or any 127/8
  // address it binds), so a cap per address would be a second total cap, or one a client
  // evades; the peer's user is not known for TCP.
  static constexpr size_t kMaxConnections = 64;

  // Listens on 127.0.0.1:port (0: a free port the system picks; port() says which) and starts
  // the thread. InvalidArgument for a port outside 0..65535, Unavailable when the port cannot
  // be bound (in use), ResourceExhausted when no thread can be created: never an exception.
  static absl::StatusOr<std::unique_ptr<MetricsServer>> Start(int port);

  // Stops the thread (promptly, mid-connection too) and joins it; closes the port.
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  int port() const { return port_; }

  // What GET /metrics answers from now (empty until the first call). Copies under a lock held
  // only for the swap: a scrape in progress keeps the text it took.
  void Publish(std::string text);

  // In a forked child (from a pthread_atfork child handler): the parent's thread does not
  // exist here. Closes the child's copies of the sockets (the parent keeps serving), forgets
  // the thread without joining it; Publish and the destructor then do nothing. A child that
  // wants its own port starts a new server (on another port, or 0).
  void AbandonAfterFork();

 private:
  MetricsServer(int listen_fd, int wake_fd, int port);
  void Run();
  std::shared_ptr<const std::string> PublishedText();

  const int listen_fd_;
  const int wake_fd_;  // an eventfd: the destructor writes it to end any poll at once
  const int port_;
  // The connections being served (-1: a free slot), for AbandonAfterFork: written by the
  // server's thread only, read in a forked child where that thread no longer runs.
  std::array<std::atomic<int>, kMaxConnections> connection_fds_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> abandoned_{false};
  std::mutex mu_;
  std::shared_ptr<const std::string> text_;  // guarded by mu_
  std::thread thread_;
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_SESSION_METRICS_SERVER_H_
