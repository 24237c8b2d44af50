#include "session/metrics_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <new>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace gpuidle::internal {
namespace {

using Clock = std::chrono::steady_clock;

constexpr absl::string_view kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";
// After the answer, what the client still sends is read (and dropped) this long, so that
// closing with unread bytes does not reset the connection before the client read the answer.
constexpr std::chrono::milliseconds kDrainTimeout{250};
constexpr size_t kMaxDrainBytes = 64 * 1024;

// What the wait for a socket ended with.
enum class Ready { kYes, kTimeout, kStop, kError };

// Waits until fd is ready for events, the deadline passes or the server is told to stop.
Ready WaitFor(int fd, short events, int wake_fd, Clock::time_point deadline) {
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return Ready::kTimeout;
    pollfd fds[2] = {{fd, events, 0}, {wake_fd, POLLIN, 0}};
    const int n = ::poll(fds, 2, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Ready::kError;
    if (fds[1].revents != 0) return Ready::kStop;
    if (fds[0].revents != 0) return Ready::kYes;
  }
}

// Sends all of data before the deadline; false when the client went away or was too slow.
// MSG_NOSIGNAL: a client that closed early must not raise SIGPIPE in the host program.
bool SendAll(int fd, absl::string_view data, bool more, int wake_fd, Clock::time_point deadline) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL | (more ? MSG_MORE : 0));
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (WaitFor(fd, POLLOUT, wake_fd, deadline) != Ready::kYes) return false;
      continue;
    }
    return false;
  }
  return true;
}

struct Response {
  int code = 200;
  absl::string_view reason = "OK";
  absl::string_view content_type = "text/plain; charset=utf-8";
  std::string extra_headers;
  std::string body;  // of a refusal; the metrics are sent from the published text
};

std::string Head(const Response& r, size_t content_length) {
  return absl::StrCat("HTTP/1.1 ", r.code, " ", r.reason, "\r\nContent-Type: ", r.content_type,
                      "\r\nContent-Length: ", content_length, "\r\n", r.extra_headers,
                      "Connection: close\r\n\r\n");
}

Response Error(int code, absl::string_view reason, std::string body) {
  Response r;
  r.code = code;
  r.reason = reason;
  r.body = std::move(body);
  return r;
}

// A method is a token (RFC 9110): visible ASCII without separators.
bool IsToken(absl::string_view s) {
  if (s.empty()) return false;
  for (unsigned char c : s) {
    if (c <= 0x20 || c >= 0x7f ||
        absl::string_view("\"(),/:;<=>?@[\\]{}").find(static_cast<char>(c)) !=
            absl::string_view::npos) {
      return false;
    }
  }
  return true;
}

// Bytes a request line may hold: visible ASCII and spaces.
bool IsRequestLineText(absl::string_view s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return c >= 0x20 && c < 0x7f; });
}

// The end of the request's header block ("\r\n\r\n" or a bare "\n\n"), npos if not yet seen.
size_t HeaderEnd(absl::string_view request) {
  const size_t crlf = request.find("\r\n\r\n");
  const size_t lf = request.find("\n\n");
  if (crlf != absl::string_view::npos && (lf == absl::string_view::npos || crlf + 2 <= lf)) {
    return crlf + 4;
  }
  return lf == absl::string_view::npos ? lf : lf + 2;
}

// The request line so far ("" while it is incomplete) and whether what came so far can still
// be an HTTP request: garbage (a TLS handshake, binary) is answered at once.
bool PlausibleSoFar(absl::string_view request, absl::string_view* line) {
  const size_t eol = request.find('\n');
  absl::string_view first = request.substr(0, eol);
  if (eol != absl::string_view::npos && absl::EndsWith(first, "\r")) first.remove_suffix(1);
  *line = eol == absl::string_view::npos ? absl::string_view() : first;
  return IsRequestLineText(first);
}

enum class Method { kGet, kHead };

// What a complete request line asks for; false with the answer in *refusal when refused.
bool ParseRequestLine(absl::string_view line, Method* method, Response* refusal) {
  const std::vector<absl::string_view> parts = absl::StrSplit(line, ' ');
  if (parts.size() != 3 || !IsToken(parts[0]) || parts[1].empty() ||
      !absl::StartsWith(parts[2], "HTTP/1.") || parts[2].size() != 8 ||
      (parts[2][7] != '0' && parts[2][7] != '1')) {
    *refusal = Error(400, "Bad Request", "bad request: gpuidle serves GET /metrics\n");
    return false;
  }
  if (parts[0] == "GET") {
    *method = Method::kGet;
  } else if (parts[0] == "HEAD") {
    *method = Method::kHead;
  } else {
    *refusal =
        Error(405, "Method Not Allowed", "method not allowed: gpuidle serves GET /metrics\n");
    refusal->extra_headers = "Allow: GET, HEAD\r\n";
    return false;
  }
  absl::string_view path = parts[1];
  path = path.substr(0, path.find('?'));
  if (path != "/metrics") {
    *refusal = Error(404, "Not Found", "not found: gpuidle serves GET /metrics\n");
    return false;
  }
  return true;
}

// Blocks the signals a program directs at the process while the server's thread is created,
// so that they go to the program's own threads (which may wait for them); faults stay
// deliverable so that a crash handler still runs.
class BlockAsyncSignals {
 public:
  BlockAsyncSignals() {
    sigset_t all;
    sigfillset(&all);
    for (int s : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS}) sigdelset(&all, s);
    blocked_ = ::pthread_sigmask(SIG_BLOCK, &all, &old_) == 0;
  }
  ~BlockAsyncSignals() {
    if (blocked_) ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

 private:
  sigset_t old_;
  bool blocked_ = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<MetricsServer>> MetricsServer::Start(int port) {
  if (port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics port ", port, " is not a TCP port (0 to 65535; 0: any free one)"));
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot open the metrics port: socket: ", std::strerror(errno)));
  }
  auto fail = [fd](absl::string_view what) {
    const int err = errno;
    ::close(fd);
    return absl::UnavailableError(absl::StrCat(what, ": ", std::strerror(err)));
  };
  // A restarted job may bind its port again while connections of the previous one linger in
  // TIME_WAIT; it never lets two servers listen on one port.
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  // Loopback only: the metrics describe the program, and nothing here authenticates a client.
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0) {
    return fail(absl::StrCat("cannot listen on 127.0.0.1:", port, " for metrics"));
  }
  if (::listen(fd, 16) != 0) {
    return fail(absl::StrCat("cannot listen on 127.0.0.1:", port, " for metrics"));
  }
  socklen_t length = sizeof(address);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return fail("cannot read the metrics port");
  }
  const int wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd < 0) return fail("cannot start the metrics server: eventfd");

  std::unique_ptr<MetricsServer> server(new MetricsServer(fd, wake_fd, ntohs(address.sin_port)));
  try {
    BlockAsyncSignals blocked;
    server->thread_ = std::thread([s = server.get()] { s->Run(); });
  } catch (const std::system_error& e) {
    // Out of threads (ulimit -u, a container's pids limit): no scrape port, the job runs on.
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot start gpuidle's metrics thread: ", e.what()));
  }
  return server;
}

MetricsServer::MetricsServer(int listen_fd, int wake_fd, int port)
    : listen_fd_(listen_fd),
      wake_fd_(wake_fd),
      port_(port),
      text_(std::make_shared<const std::string>()) {}

MetricsServer::~MetricsServer() {
  if (abandoned_.load()) return;
  stopping_.store(true);
  const uint64_t one = 1;
  while (::write(wake_fd_, &one, sizeof(one)) < 0 && errno == EINTR) {
  }
  if (thread_.joinable()) thread_.join();
  ::close(listen_fd_);
  ::close(wake_fd_);
}

void MetricsServer::Publish(std::string text) {
  if (abandoned_.load()) return;
  auto published = std::make_shared<const std::string>(std::move(text));
  {
    std::lock_guard<std::mutex> lock(mu_);
    text_.swap(published);
  }
  // The previous text is freed here, outside the lock (or by the scrape still sending it).
}

void MetricsServer::AbandonAfterFork() {
  abandoned_.store(true);
  // The child's copies only: the parent's sockets stay open and served.
  const int connection = connection_fd_.exchange(-1);
  if (connection >= 0) ::close(connection);
  ::close(listen_fd_);
  ::close(wake_fd_);
  // The lock may have been held by the parent's thread, which does not exist here; the thread
  // object is overwritten rather than detached or joined (either would touch that thread).
  new (&mu_) std::mutex();
  new (&thread_) std::thread();
}

void MetricsServer::Run() {
  while (!stopping_.load()) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    const int n = ::poll(fds, 2, 1000);
    if (n < 0 && errno != EINTR) return;
    if (n <= 0) continue;
    if (fds[1].revents != 0) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // The program ran out of descriptors: the pending connection stays pending; retrying
        // at once would spin.
        pollfd wake = {wake_fd_, POLLIN, 0};
        if (::poll(&wake, 1, 100) > 0) return;
      }
      continue;
    }
    connection_fd_.store(fd);
    Serve(fd);
    connection_fd_.store(-1);
    ::close(fd);
  }
}

void MetricsServer::Serve(int fd) {
  const Clock::time_point read_deadline = Clock::now() + kReadTimeout;
  std::string request;
  size_t header_end = std::string::npos;
  bool parsed_line = false;
  Method method = Method::kGet;
  Response refusal;
  bool refused = false;
  char buffer[2048];
  while (header_end == std::string::npos && !refused) {
    if (request.size() > kMaxRequestBytes) {
      refusal = Error(431, "Request Header Fields Too Large",
                      absl::StrCat("request too large: at most ", kMaxRequestBytes, " bytes\n"));
      refused = true;
      break;
    }
    const Ready ready = WaitFor(fd, POLLIN, wake_fd_, read_deadline);
    if (ready == Ready::kStop || ready == Ready::kError) return;
    if (ready == Ready::kTimeout) {
      refusal = Error(408, "Request Timeout", "request timeout\n");
      refused = true;
      break;
    }
    const size_t room = kMaxRequestBytes + 1 - request.size();
    const ssize_t n = ::recv(fd, buffer, std::min(sizeof(buffer), room), 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n < 0) return;
    if (n == 0) {
      // The client stopped sending: answer what it sent, if anything (it may still read).
      if (request.empty()) return;
      refusal = Error(400, "Bad Request", "bad request: incomplete\n");
      refused = true;
      break;
    }
    request.append(buffer, static_cast<size_t>(n));
    header_end = HeaderEnd(absl::string_view(request).substr(0, kMaxRequestBytes));
    absl::string_view line;
    if (!PlausibleSoFar(request, &line)) {
      refusal = Error(400, "Bad Request", "bad request: not HTTP\n");
      refused = true;
    } else if (!line.empty() && !parsed_line) {
      parsed_line = true;
      // A request line that is wrong is answered without waiting for the headers.
      refused = !ParseRequestLine(line, &method, &refusal);
    }
  }
  if (header_end != std::string::npos && !parsed_line && !refused) {
    refusal = Error(400, "Bad Request", "bad request: no request line\n");
    refused = true;
  }

  const Clock::time_point write_deadline = Clock::now() + kWriteTimeout;
  if (refused) {
    SendAll(fd, absl::StrCat(Head(refusal, refusal.body.size()), refusal.body), false, wake_fd_,
            write_deadline);
  } else {
    std::shared_ptr<const std::string> text;
    {
      std::lock_guard<std::mutex> lock(mu_);
      text = text_;
    }
    Response ok;
    ok.content_type = kMetricsContentType;
    const bool head_only = method == Method::kHead;
    if (!SendAll(fd, Head(ok, text->size()), !head_only, wake_fd_, write_deadline)) return;
    if (!head_only && !SendAll(fd, *text, false, wake_fd_, write_deadline)) return;
  }
  // Closing with unread bytes would reset the connection, and the client could lose the
  // answer: say we are done, then read what it still sends, a little while.
  ::shutdown(fd, SHUT_WR);
  const Clock::time_point drain_deadline = Clock::now() + kDrainTimeout;
  size_t drained = 0;
  while (drained < kMaxDrainBytes && WaitFor(fd, POLLIN, wake_fd_, drain_deadline) == Ready::kYes) {
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n <= 0) break;
    drained += static_cast<size_t>(n);
  }
}

}  // namespace gpuidle::internal
