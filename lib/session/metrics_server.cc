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
#include <memory>
#include <new>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
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
// Connections accepted in one turn of the loop at most: a flood of connections cannot evict one
// accepted in the same turn before its request is read, and those open are served in between.
constexpr int kMaxAcceptsPerTurn = 16;
// Connections the kernel holds until the thread accepts them: twice the cap on those open.
constexpr int kListenBacklog = 2 * static_cast<int>(MetricsServer::kMaxConnections);
// The longest poll, so that a stop request that missed the eventfd is still seen.
constexpr std::chrono::milliseconds kMaxPoll{1000};

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

// Where a connection is: it reads the request, then sends the answer, then reads (and drops)
// what the client still sends until it closes or the drain ends; kDone is closed next.
enum class Phase { kReading, kWriting, kDraining, kDone };

// One client, served by the server's thread a piece at a time as its socket allows. Its memory
// is bounded: the request (kMaxRequestBytes and one byte), the head of the answer, and a
// reference to the text it takes.
struct Connection {
  int fd = -1;
  int slot = -1;  // its index in MetricsServer::connection_fds_
  Clock::time_point accepted_at;
  Phase phase = Phase::kReading;
  Clock::time_point deadline;  // of the phase it is in
  std::string request;
  bool parsed_line = false;
  Method method = Method::kGet;
  std::string head;                         // status line and headers; a refusal's body too
  std::shared_ptr<const std::string> body;  // the metrics of a GET
  size_t sent = 0;                          // bytes of head, then of body, sent
  size_t drained = 0;
};

// The answer from now on: a refusal, or the published text (its headers only for HEAD).
void BeginAnswer(Connection* c, const Response* refusal,
                 absl::FunctionRef<std::shared_ptr<const std::string>()> published_text) {
  if (refusal != nullptr) {
    c->head = absl::StrCat(Head(*refusal, refusal->body.size()), refusal->body);
  } else {
    std::shared_ptr<const std::string> text = published_text();
    Response ok;
    ok.content_type = kMetricsContentType;
    c->head = Head(ok, text->size());
    if (c->method == Method::kGet) c->body = std::move(text);
  }
  c->request = std::string();  // its memory is not needed any more
  c->phase = Phase::kWriting;
  c->deadline = Clock::now() + MetricsServer::kWriteTimeout;
}

// Reads what the client has sent, without blocking; begins the answer once the request line
// and headers are complete or the request is refused, and ends a client that left silently.
void ReadRequest(Connection* c,
                 absl::FunctionRef<std::shared_ptr<const std::string>()> published_text) {
  char buffer[2048];
  while (true) {
    Response refusal;
    bool refused = false;
    bool complete = false;
    if (c->request.size() > MetricsServer::kMaxRequestBytes) {
      refusal = Error(
          431, "Request Header Fields Too Large",
          absl::StrCat("request too large: at most ", MetricsServer::kMaxRequestBytes, " bytes\n"));
      refused = true;
    } else {
      const size_t room = MetricsServer::kMaxRequestBytes + 1 - c->request.size();
      const ssize_t n = ::recv(c->fd, buffer, std::min(sizeof(buffer), room), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;  // wait for more
      if (n < 0) {
        c->phase = Phase::kDone;
        return;
      }
      if (n == 0) {
        // The client stopped sending: answer what it sent, if anything (it may still read).
        if (c->request.empty()) {
          c->phase = Phase::kDone;
          return;
        }
        refusal = Error(400, "Bad Request", "bad request: incomplete\n");
        refused = true;
      } else {
        if (c->request.empty()) {
          // The first byte came: from now the bound is the one for the whole request.
          c->deadline = c->accepted_at + MetricsServer::kReadTimeout;
        }
        c->request.append(buffer, static_cast<size_t>(n));
        complete =
            HeaderEnd(absl::string_view(c->request).substr(0, MetricsServer::kMaxRequestBytes)) !=
            absl::string_view::npos;
        absl::string_view line;
        if (!PlausibleSoFar(c->request, &line)) {
          refusal = Error(400, "Bad Request", "bad request: not HTTP\n");
          refused = true;
        } else if (!line.empty() && !c->parsed_line) {
          c->parsed_line = true;
          // A request line that is wrong is answered without waiting for the headers.
          refused = !ParseRequestLine(line, &c->method, &refusal);
        }
        if (complete && !c->parsed_line && !refused) {
          refusal = Error(400, "Bad Request", "bad request: no request line\n");
          refused = true;
        }
      }
    }
    if (refused || complete) {
      BeginAnswer(c, refused ? &refusal : nullptr, published_text);
      return;
    }
  }
}

// Sends what the socket takes of the answer, without blocking; after the last byte, says we
// are done and starts the drain.
void SendAnswer(Connection* c) {
  while (true) {
    const size_t body_size = c->body == nullptr ? 0 : c->body->size();
    absl::string_view rest;
    bool more = false;
    if (c->sent < c->head.size()) {
      rest = absl::string_view(c->head).substr(c->sent);
      more = body_size > 0;
    } else if (c->sent - c->head.size() < body_size) {
      rest = absl::string_view(*c->body).substr(c->sent - c->head.size());
    } else {
      // Closing with unread bytes would reset the connection, and the client could lose the
      // answer: say we are done, then read what it still sends, a little while.
      ::shutdown(c->fd, SHUT_WR);
      c->head = std::string();
      c->body = nullptr;
      c->phase = Phase::kDraining;
      c->deadline = Clock::now() + kDrainTimeout;
      return;
    }
    // MSG_NOSIGNAL: a client that closed early must not raise SIGPIPE in the host program.
    const ssize_t n = ::send(c->fd, rest.data(), rest.size(), MSG_NOSIGNAL | (more ? MSG_MORE : 0));
    if (n > 0) {
      c->sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;  // wait until writable
    // The client went away (or reset the connection).
    c->phase = Phase::kDone;
    return;
  }
}

// Reads and drops what the client still sends, without blocking, up to kMaxDrainBytes.
void Drain(Connection* c) {
  char buffer[2048];
  while (c->drained < kMaxDrainBytes) {
    const ssize_t n = ::recv(c->fd, buffer, sizeof(buffer), 0);
    if (n > 0) {
      c->drained += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    break;  // the client closed (or reset) its side
  }
  c->phase = Phase::kDone;
}

// Does all the connection's socket allows now: reads, answers, drains, one phase after another.
void Advance(Connection* c,
             absl::FunctionRef<std::shared_ptr<const std::string>()> published_text) {
  if (c->phase == Phase::kReading) ReadRequest(c, published_text);
  if (c->phase == Phase::kWriting) SendAnswer(c);
  if (c->phase == Phase::kDraining) Drain(c);
}

// A connection whose phase ran past its deadline: one still reading its request is answered 408
// (and drained as any other); one that does not take its answer, or is draining, is closed.
void Expire(Connection* c, absl::FunctionRef<std::shared_ptr<const std::string>()> published_text) {
  if (c->phase == Phase::kReading) {
    const Response timeout = Error(408, "Request Timeout", "request timeout\n");
    BeginAnswer(c, &timeout, published_text);
    Advance(c, published_text);
  } else {
    c->phase = Phase::kDone;
  }
}

short EventsOf(Phase phase) { return phase == Phase::kWriting ? POLLOUT : POLLIN; }

int PollTimeoutMs(Clock::duration left) {
  // Rounded up: a poll that wakes a fraction of a millisecond early would spin.
  const int64_t ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  return static_cast<int>(std::clamp<int64_t>(ms, 0, kMaxPoll.count()));
}

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
  // A burst of connections while the thread waits for a core waits to be accepted rather than
  // have its SYNs dropped (and retried a second later); past the cap the oldest are dropped.
  if (::listen(fd, kListenBacklog) != 0) {
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
      text_(std::make_shared<const std::string>()) {
  for (std::atomic<int>& fd : connection_fds_) fd.store(-1);
}

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
  for (std::atomic<int>& slot : connection_fds_) {
    const int connection = slot.exchange(-1);
    if (connection >= 0) ::close(connection);
  }
  ::close(listen_fd_);
  ::close(wake_fd_);
  // The lock may have been held by the parent's thread, which does not exist here; the thread
  // object is overwritten rather than detached or joined (either would touch that thread).
  new (&mu_) std::mutex();
  new (&thread_) std::thread();
}

std::shared_ptr<const std::string> MetricsServer::PublishedText() {
  std::lock_guard<std::mutex> lock(mu_);
  return text_;
}

void MetricsServer::Run() {
  // In order of acceptance, so the oldest is the first. Reserved once: the loop allocates no
  // more per connection than the connection's own strings.
  std::vector<Connection> connections;
  connections.reserve(kMaxConnections);
  std::vector<pollfd> fds;
  fds.reserve(2 + kMaxConnections);
  const auto published_text = [this] { return PublishedText(); };
  const auto close_connection = [this](const Connection& c) {
    connection_fds_[static_cast<size_t>(c.slot)].store(-1);
    ::close(c.fd);
  };
  Clock::time_point accept_paused_until = Clock::time_point::min();

  while (!stopping_.load()) {
    Clock::time_point now = Clock::now();
    const bool accepting = now >= accept_paused_until;
    Clock::time_point wake_at = accepting ? now + kMaxPoll : accept_paused_until;
    fds.clear();
    fds.push_back({wake_fd_, POLLIN, 0});
    fds.push_back({accepting ? listen_fd_ : -1, POLLIN, 0});  // poll skips a negative fd
    for (const Connection& c : connections) {
      fds.push_back({c.fd, EventsOf(c.phase), 0});
      wake_at = std::min(wake_at, c.deadline);
    }
    const int n = ::poll(fds.data(), fds.size(), PollTimeoutMs(wake_at - now));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || fds[0].revents != 0) break;

    for (size_t i = 0; i < connections.size(); ++i) {
      if (fds[2 + i].revents != 0) Advance(&connections[i], published_text);
    }
    now = Clock::now();
    for (Connection& c : connections) {
      if (c.phase != Phase::kDone && now >= c.deadline) Expire(&c, published_text);
    }
    for (const Connection& c : connections) {
      if (c.phase == Phase::kDone) close_connection(c);
    }
    std::erase_if(connections, [](const Connection& c) { return c.phase == Phase::kDone; });

    if ((fds[1].revents & POLLIN) == 0) continue;
    for (int accepts = 0; accepts < kMaxAcceptsPerTurn; ++accepts) {
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          // The program ran out of descriptors: the pending connection stays pending, and
          // retrying at once would spin; those open are served meanwhile.
          accept_paused_until = Clock::now() + std::chrono::milliseconds(100);
        }
        break;  // EAGAIN: none is pending
      }
      if (connections.size() == kMaxConnections) {
        // Full: the oldest goes. A scrape is answered within a turn, so the oldest connections
        // are idle or slow ones, and a new one outlives at least kMaxConnections - 1 others.
        close_connection(connections.front());
        connections.erase(connections.begin());
      }
      size_t slot = 0;
      while (connection_fds_[slot].load() >= 0) ++slot;  // one is free: fewer are open
      Connection& c = connections.emplace_back();
      c.fd = fd;
      c.slot = static_cast<int>(slot);
      c.accepted_at = Clock::now();
      c.deadline = c.accepted_at + kFirstByteTimeout;
      connection_fds_[slot].store(fd);
      // A scraper sends its request right after connecting: read it now, not a turn later.
      Advance(&c, published_text);
      if (c.phase == Phase::kDone) {
        close_connection(c);
        connections.pop_back();
      }
    }
  }
  for (const Connection& c : connections) close_connection(c);
}

}  // namespace gpuidle::internal
