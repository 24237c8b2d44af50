// The scrape port (session/metrics_server.h) driven through plain sockets: what it answers,
// what it refuses, and that no client (silent, oversized, slow, vanishing, or many of them at
// once) stops it serving the next one.
#include "session/metrics_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuidle::internal {
namespace {

using ::std::chrono::milliseconds;
using ::std::chrono::seconds;
using ::std::chrono::steady_clock;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::unique_ptr<MetricsServer> StartServer() {
  absl::StatusOr<std::unique_ptr<MetricsServer>> server = MetricsServer::Start(0);
  EXPECT_TRUE(server.ok()) << server.status();
  if (!server.ok()) return nullptr;
  EXPECT_GT((*server)->port(), 0);
  return *std::move(server);
}

// A client socket connected to the server; generous timeouts keep a broken server from hanging
// the test (they are no assertion about how fast it answers).
int Connect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  EXPECT_GE(fd, 0);
  timeval timeout{.tv_sec = 30, .tv_usec = 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)), 0)
      << std::strerror(errno);
  return fd;
}

bool SendAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Everything the server sends until it closes.
std::string ReadAll(int fd) {
  std::string out;
  char buffer[65536];
  while (true) {
    const ssize_t n = ::recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  return out;
}

std::string Exchange(int port, absl::string_view request) {
  const int fd = Connect(port);
  EXPECT_TRUE(SendAll(fd, request));
  std::string response = ReadAll(fd);
  ::close(fd);
  return response;
}

struct HttpResponse {
  bool well_formed = false;
  std::string version;
  int status = 0;
  std::string reason;
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
};

// A response as HTTP/1.1 frames it: status line, CRLF-terminated headers, a blank line, a body
// of exactly Content-Length bytes.
HttpResponse ParseResponse(const std::string& raw) {
  HttpResponse r;
  const size_t end = raw.find("\r\n\r\n");
  if (end == std::string::npos) return r;
  std::vector<std::string> lines = absl::StrSplit(raw.substr(0, end), "\r\n");
  const std::vector<std::string> status = absl::StrSplit(lines[0], absl::MaxSplits(' ', 2));
  if (status.size() != 3 || !absl::SimpleAtoi(status[1], &r.status)) return r;
  r.version = status[0];
  r.reason = status[2];
  for (size_t i = 1; i < lines.size(); ++i) {
    const size_t colon = lines[i].find(':');
    if (colon == std::string::npos) return r;
    const std::string name = absl::AsciiStrToLower(lines[i].substr(0, colon));
    if (r.headers.count(name)) return r;
    r.headers[name] = std::string(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
  }
  r.body = raw.substr(end + 4);
  size_t length = 0;
  if (!r.headers.count("content-length") ||
      !absl::SimpleAtoi(r.headers["content-length"], &length)) {
    return r;
  }
  r.well_formed = length == r.body.size();
  return r;
}

HttpResponse Get(int port, absl::string_view path = "/metrics") {
  return ParseResponse(Exchange(port, absl::StrCat("GET ", path,
                                                   " HTTP/1.1\r\nHost: localhost\r\n"
                                                   "User-Agent: test\r\n\r\n")));
}

TEST(MetricsServerTest, ServesThePublishedTextAtMetrics) {
  std::unique_ptr<MetricsServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  server->Publish("# TYPE gpuidle_up gauge\ngpuidle_up 1\n");
  const HttpResponse r = Get(server->port());
  ASSERT_TRUE(r.well_formed);
  EXPECT_EQ(r.version, "HTTP/1.1");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.reason, "OK");
  EXPECT_EQ(r.headers.at("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(r.headers.at("connection"), "close");
  EXPECT_EQ(r.body, "# TYPE gpuidle_up gauge\ngpuidle_up 1\n");

  server->Publish("gpuidle_up 2\n");
  EXPECT_EQ(Get(server->port()).body, "gpuidle_up 2\n");
}

TEST(MetricsServerTest, BeforeTheFirstPublishTheBodyIsEmpty) {
  std::unique_ptr<MetricsServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  const HttpResponse r = Get(server->port());
  ASSERT_TRUE(r.well_formed);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.headers.at("content-length"), "0");
}

TEST(MetricsServerTest, AcceptsHttp10AQueryAndABareNewlineRequest) {
  std::unique_ptr<MetricsServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  server->Publish("x 1\n");
  for (const char* request :
       {"GET /metrics HTTP/1.0\r\n\r\n", "GET /metrics?name[]=x HTTP/1.1\r\n\r\n",
        "GET /metrics HTTP/1.1\n\n"}) {
    const HttpResponse r = ParseResponse(Exchange(server->port(), request));
    ASSERT_TRUE(r.well_formed) << request;
    EXPECT_EQ(r.status, 200) << request;
    EXPECT_EQ(r.body, "x 1\n") << request;
  }
}

TEST(MetricsServerTest, HeadHasTheHeadersOfGetWithoutTheBody) {
  std::unique_ptr<MetricsServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  server->Publish("x 1\n");
  const std::string raw = Exchange(server->port(), "HEAD /metrics HTTP/1.1\r\n\r\n");
  ASSERT_THAT(raw, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(raw, HasSubstr("\r\nContent-Length: 4\r\n"));
  EXPECT_EQ(raw.substr(raw.size() - 4), "\r\n\r\n");  // nothing after the headers
}

TEST(MetricsServerTest, OtherPathsAreNotFound) {
  std::unique_ptr<MetricsServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  server->Publish("secret 1\n");
  for (const char* path : {"/", "/metricsx", "/metrics/", "/favicon.ico", "*"}) {
    const HttpResponse r = Get(server->port(), path);
    ASSERT_TRUE(r.well_formed) << path;
    EXPECT_EQ(r.status, 404) << path;
    EXPECT_THAT(r.body, Not(HasSubstr("secret"))) << path;
  }
}

TEST(MetricsServerTest, OtherMethodsAreNotAllowed) {
  std::unique_ptr<MetricsServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  for (const char* method : {"POST", "PUT", "DELETE", "OPTIONS", "get"}) {
    const HttpResponse r =
        ParseResponse(Exchange(server->port(), absl::StrCat(method, " /metrics HTTP/1.1\r\n\r\n")));
    ASSERT_TRUE(r.well_formed) << method;
    EXPECT_EQ(r.status, 405) << method;
    EXPECT_EQ(r.headers.at("allow"), "GET, HEAD") << method;
  }
}

TEST(MetricsServerTest, GarbageIsABadRequest) {
  std::unique_ptr<MetricsServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  const std::string tls_hello("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11);
  for (const std::string& request :
       {std::string("hello\r\n\r\n"), std::string("GET /metrics\r\n\r\n"),
        std::string("GET /metrics HTTP/2.0\r\n\r\n"), std::string("GET  /metrics HTTP/1.1\r\n\r\n"),
        std::string("\r\n\r\n"), std::string("GET /metr\x01ics HTTP/1.1\r\n\r\n"), tls_hello}) {
    // The client keeps its side open: a request that cannot be HTTP is answered at once, not
    // after the read timeout (which would be 408).
    const HttpResponse r = ParseResponse(Exchange(server->port(), request));
    ASSERT_TRUE(r.well_formed) << absl::CHexEscape(request);
    EXPECT_EQ(r.status, 400) << absl::CHexEscape(request);
  }
}

TEST(MetricsServerTest, AHeaderJustUnderTheBoundIsServed) {
  std::unique_ptr<MetricsServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  server->Publish("x 1\n");
  std::string request = "GET /metrics HTTP/1.1\r\nX-Pad: ";
  request += std::string(MetricsServer::kMaxRequestBytes - request.size() - 4, 'p');
  request += "\r\n\r\n";
  ASSERT_EQ(request.size(), MetricsServer::kMaxRequestBytes);
  const HttpResponse r = ParseResponse(Exchange(server->port(), request));
  ASSERT_TRUE(r.well_formed);
  EXPECT_EQ(r.status, 200);
}

TEST(MetricsServerTest, AnOversizedHeaderIsRefusedAndTheNextClientServed) {
  std::unique_ptr<MetricsServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  server->Publish("x 1\n");
  const std::string request =
      absl::StrCat("GET /metrics HTTP/1.1\r\nX-Pad: ", std::string(40'000, 'p'));  // no end
  const HttpResponse refused = ParseResponse(Exchange(server->port(), request));
  ASSERT_TRUE(refused.well_formed);
  EXPECT_EQ(refused.status, 431);
  const HttpResponse next = Get(server->port());
  EXPECT_EQ(next.status, 200);
  EXPECT_EQ(next.body, "x 1\n");
}

TEST(MetricsServerTest, ASilentClientTimesOutAndTheNextOneIsServed) {
  std::unique_ptr<MetricsServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  server->Publish("x 1\n");
  const int silent = Connect(server->port());
  // Served beside the silent one, which is answered once its deadline has passed.
  const HttpResponse next = Get(server->port());
  EXPECT_EQ(next.status, 200);
  EXPECT_EQ(next.body, "x 1\n");
  const HttpResponse timed_out = ParseResponse(ReadAll(silent));
  ::close(silent);
  ASSERT_TRUE(timed_out.well_formed);
  EXPECT_EQ(timed_out.status, 408);
}

TEST(MetricsServerTest, AClientThatLeavesWithoutARequestIsForgotten) {
  std::unique_ptr<MetricsServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  server->Publish("x 1\n");
  ::close(Connect(server->port()));
  const int half = Connect(server->port());
  ASSERT_TRUE(SendAll(half, "GET /metr"));
  ::shutdown(half, SHUT_WR);
  const HttpResponse incomplete = ParseResponse(ReadAll(half));
  ::close(half);
  EXPECT_EQ(incomplete.status, 400);
  EXPECT_EQ(Get(server->port()).body, "x 1\n");
}

// Whether the server has answered on fd (or closed it) by now: readable without waiting.
bool Answered(int fd, milliseconds wait = milliseconds(0)) {
  pollfd p = {fd, POLLIN, 0};
  return ::poll(&p, 1, static_cast<int>(wait.count())) > 0;
}

// Served one at a time, each idle connection held the port its read timeout and drain
// (1.25 s): 32 of them delayed a scrape by 40 s, past Prometheus's 10 s scrape timeout.
TEST(MetricsServerTest, IdleConnectionsDoNotDelayAScrape) {
  std::unique_ptr<MetricsServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  server->Publish("x 1\n");
  std::vector<int> idle;
  for (int i = 0; i < 32; ++i) idle.push_back(Connect(server->port()));
  const steady_clock::time_point before = steady_clock::now();
  const HttpResponse r = Get(server->port());
  const steady_clock::duration took = steady_clock::now() - before;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "x 1\n");
  // Well under a second where it is not loaded (about a millisecond); 2 s leaves room for a
  // busy CI machine and sanitizers, and is still far from one connection at a time.
  EXPECT_LT(took, seconds(2));
  std::cout << "a scrape beside 32 idle connections took "
            << std::chrono::duration<double, std::milli>(took).count() << " ms\n";
  for (int fd : idle) {
    EXPECT_EQ(ParseResponse(ReadAll(fd)).status, 408);
    ::close(fd);
  }
}

// A connection that sends nothing is answered at the first-byte deadline; one that began its
// request has until the deadline of the whole request, and is still waiting then.
TEST(MetricsServerTest, ASilentConnectionIsAnsweredAtTheFirstByteDeadline) {
  std::unique_ptr<MetricsServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  const steady_clock::time_point start = steady_clock::now();
  const int silent = Connect(server->port());
  const int begun = Connect(server->port());
  ASSERT_TRUE(SendAll(begun, "GET /metrics HTTP/1.1\r\n"));
  ASSERT_TRUE(Answered(silent, seconds(10)));
  const steady_clock::duration silent_answered = steady_clock::now() - start;
  EXPECT_FALSE(Answered(begun)) << "a begun request was cut at the first-byte deadline";
  EXPECT_GE(silent_answered, MetricsServer::kFirstByteTimeout);
  // Not held to the whole request's deadline (this leaves the server 500 ms to wake up).
  EXPECT_LT(silent_answered, MetricsServer::kReadTimeout);
  EXPECT_EQ(ParseResponse(ReadAll(silent)).status, 408);
  EXPECT_EQ(ParseResponse(ReadAll(begun)).status, 408);
  EXPECT_GE(steady_clock::now() - start, MetricsServer::kReadTimeout);
  ::close(silent);
  ::close(begun);
}

// Slowloris: a header that grows by a byte every 100 ms and never ends is answered 408 at the
// deadline of the whole request (keeping bytes coming does not extend it), and the connection
// closed; a scrape meanwhile is answered while the slow client still waits.
TEST(MetricsServerTest, ASlowClientIsCutAtItsDeadlineWhileOthersAreServed) {
  std::unique_ptr<MetricsServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  server->Publish("x 1\n");
  const steady_clock::time_point start = steady_clock::now();
  const int slow = Connect(server->port());
  ASSERT_TRUE(SendAll(slow, "GET /metrics HTTP/1.1\r\nX-Slow: "));
  int bytes = 0;
  bool scraped_while_slow_waits = false;
  while (!Answered(slow, milliseconds(100)) && steady_clock::now() - start < seconds(30)) {
    ASSERT_TRUE(SendAll(slow, "s"));
    if (++bytes == 3) {
      const HttpResponse r = Get(server->port());
      scraped_while_slow_waits = r.status == 200 && r.body == "x 1\n" && !Answered(slow);
    }
  }
  const steady_clock::duration answered_after = steady_clock::now() - start;
  const HttpResponse timed_out = ParseResponse(ReadAll(slow));  // ends: the server closed it
  ::close(slow);
  EXPECT_TRUE(scraped_while_slow_waits);
  ASSERT_TRUE(timed_out.well_formed);
  EXPECT_EQ(timed_out.status, 408);
  EXPECT_GE(answered_after, MetricsServer::kReadTimeout);
  EXPECT_LT(answered_after, MetricsServer::kReadTimeout + seconds(2));
  EXPECT_GE(bytes, 5);  // it kept sending up to the deadline
}

// Past kMaxConnections the oldest connection is dropped (closed without an answer) for each new
// one, so a scraper still gets served; the connections still open when it came keep theirs.
TEST(MetricsServerTest, PastTheCapTheOldestConnectionsAreDroppedAndScrapesServed) {
  std::unique_ptr<MetricsServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  server->Publish("x 1\n");
  constexpr size_t kExtra = 8;
  const steady_clock::time_point start = steady_clock::now();
  std::vector<int> slow;
  for (size_t i = 0; i < MetricsServer::kMaxConnections + kExtra; ++i) {
    slow.push_back(Connect(server->port()));
    ASSERT_TRUE(SendAll(slow.back(), "GET /metrics HTTP/1.1\r\n"));  // and nothing more
  }
  const steady_clock::time_point before_scrape = steady_clock::now();
  const HttpResponse r = Get(server->port());
  const steady_clock::time_point scraped = steady_clock::now();
  const steady_clock::duration setup = scraped - start;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "x 1\n");
  EXPECT_LT(scraped - before_scrape, seconds(2));  // not after the slow ones' deadlines
  size_t dropped = 0;
  for (size_t i = 0; i < slow.size(); ++i) {
    const std::string raw = ReadAll(slow[i]);
    ::close(slow[i]);
    if (raw.empty()) {
      EXPECT_EQ(i, dropped) << "a newer connection was dropped before an older one";
      ++dropped;
    } else {
      EXPECT_EQ(ParseResponse(raw).status, 408) << i;
    }
  }
  if (setup < MetricsServer::kFirstByteTimeout) {
    // No deadline passed before the scrape was served: exactly the oldest ones made room, one
    // for each connection past the cap, the scrape's included.
    EXPECT_EQ(dropped, kExtra + 1);
  } else {
    std::cout << "setup took " << std::chrono::duration<double>(setup).count()
              << " s: deadlines may have made room first; " << dropped << " dropped\n";
    EXPECT_LE(dropped, kExtra + 1);
  }
  EXPECT_EQ(Get(server->port()).status, 200);
}

// A client that asks for a large text and never reads it holds the server at most the write
// timeout; one that resets the connection mid-answer raises no SIGPIPE (it would end this
// test's process).
TEST(MetricsServerTest, SlowAndVanishingReadersDoNotStopTheServer) {
  std::unique_ptr<MetricsServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  const std::string big(16 << 20, 'x');
  server->Publish(big);

  const int slow = Connect(server->port());
  ASSERT_TRUE(SendAll(slow, "GET /metrics HTTP/1.1\r\n\r\n"));
  const HttpResponse after_slow = Get(server->port());
  EXPECT_TRUE(after_slow.well_formed);
  EXPECT_EQ(after_slow.body.size(), big.size());
  ::close(slow);

  for (int i = 0; i < 3; ++i) {
    const int vanishing = Connect(server->port());
    ASSERT_TRUE(SendAll(vanishing, "GET /metrics HTTP/1.1\r\n\r\n"));
    char some[1024];
    EXPECT_GT(::recv(vanishing, some, sizeof(some), 0), 0);
    const linger reset{.l_onoff = 1, .l_linger = 0};
    ::setsockopt(vanishing, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
    ::close(vanishing);
  }
  server->Publish("x 1\n");
  EXPECT_EQ(Get(server->port()).body, "x 1\n");
}

TEST(MetricsServerTest, PublishingWhileClientsReadGivesEachAWholeText) {
  std::unique_ptr<MetricsServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  auto text = [](int version) {
    std::string t;
    for (int line = 0; line <= version % 97; ++line)
      absl::StrAppend(&t, "gpuidle_v ", version, "\n");
    return t;
  };
  server->Publish(text(0));
  std::atomic<bool> done{false};
  std::thread publisher([&] {
    for (int version = 1; !done.load(); ++version) server->Publish(text(version));
  });
  std::atomic<int> bad{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        const HttpResponse response = Get(server->port());
        const std::vector<std::string> lines =
            absl::StrSplit(response.body, '\n', absl::SkipEmpty());
        int version = -1;
        bool whole = response.well_formed && response.status == 200 && !lines.empty() &&
                     absl::SimpleAtoi(absl::StripPrefix(lines[0], "gpuidle_v "), &version);
        whole = whole && response.body == text(version);
        if (!whole) bad.fetch_add(1);
      }
    });
  }
  for (std::thread& t : readers) t.join();
  done.store(true);
  publisher.join();
  EXPECT_EQ(bad.load(), 0);
}

// The listening socket in the kernel's table: 127.0.0.1, never 0.0.0.0.
TEST(MetricsServerTest, ListensOnLoopbackOnly) {
  std::unique_ptr<MetricsServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  std::ifstream tcp("/proc/net/tcp");
  if (!tcp.good()) GTEST_SKIP() << "no /proc/net/tcp";
  const std::string port_hex = absl::StrFormat(":%04X", server->port());
  std::string line;
  std::vector<std::string> local_addresses;
  while (std::getline(tcp, line)) {
    const std::vector<std::string> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (fields.size() > 3 && absl::EndsWith(fields[1], port_hex) && fields[3] == "0A") {
      local_addresses.push_back(fields[1]);
    }
  }
  EXPECT_THAT(local_addresses, ::testing::ElementsAre("0100007F" + port_hex));
}

TEST(MetricsServerTest, RefusesABadPortAndOneInUse) {
  EXPECT_EQ(MetricsServer::Start(-1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MetricsServer::Start(65536).status().code(), absl::StatusCode::kInvalidArgument);
  std::unique_ptr<MetricsServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  const absl::StatusOr<std::unique_ptr<MetricsServer>> second =
      MetricsServer::Start(server->port());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(second.status().message(), HasSubstr(absl::StrCat("127.0.0.1:", server->port())));
  EXPECT_THAT(second.status().message(), HasSubstr("in use"));
}

TEST(MetricsServerTest, StopsWhileAClientIsConnected) {
  std::unique_ptr<MetricsServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  const int port = server->port();
  const int silent = Connect(port);
  const int queued = Connect(port);
  server.reset();  // returns: the poll in progress is woken, the thread joined
  ::close(silent);
  ::close(queued);
  // The port is free again.
  absl::StatusOr<std::unique_ptr<MetricsServer>> again = MetricsServer::Start(port);
  EXPECT_TRUE(again.ok()) << again.status();
}

TEST(MetricsServerTest, StartAndStopManyTimes) {
  for (int i = 0; i < 50; ++i) {
    std::unique_ptr<MetricsServer> server = StartServer();
    ASSERT_NE(server, nullptr);
  }
}

// The child of a fork has no server thread: it abandons the parent's server without waiting
// for that thread, and may start its own; the parent serves on.
TEST(MetricsServerTest, AForkedChildAbandonsTheServerAndTheParentServesOn) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "ThreadSanitizer cannot start threads in a forked child";
#endif
  std::unique_ptr<MetricsServer> server = StartServer();
  ASSERT_NE(server, nullptr);
  server->Publish("parent 1\n");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::alarm(60);  // a join of the parent's thread would hang: fail rather than wait
    server->AbandonAfterFork();
    server->Publish("ignored\n");
    server.reset();
    absl::StatusOr<std::unique_ptr<MetricsServer>> own = MetricsServer::Start(0);
    if (!own.ok()) ::_exit(2);
    (*own)->Publish("child 1\n");
    const HttpResponse r = Get((*own)->port());
    own->reset();
    ::_exit(r.body == "child 1\n" ? 0 : 3);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: no server in the child; 3: it served the wrong text";
  const HttpResponse r = Get(server->port());
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "parent 1\n");
}

}  // namespace
}  // namespace gpuidle::internal
