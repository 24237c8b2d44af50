// The gpuidle binary on a terminal and on pipes: colour and the progress bar appear only where
// a person looks (a pty stands in for the terminal), never in a pipe or a file.
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"

namespace gpuidle::internal {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kTrace = std::string(GPUIDLE_TEST_DATA_DIR) + "/traces/live/mixed.trace.json.gz";

enum class Sink { kPipe, kTerminal };

struct Output {
  int code = -1;
  std::string out, err;
};

// A pipe or a raw pty (no newline translation) for one of the child's streams: {ours, its}.
std::pair<int, int> OpenSink(Sink sink) {
  int fds[2] = {-1, -1};
  if (sink == Sink::kPipe) {
    EXPECT_EQ(pipe(fds), 0);
    return {fds[0], fds[1]};
  }
  struct termios raw {};
  cfmakeraw(&raw);
  struct winsize size {};
  size.ws_col = 100;
  size.ws_row = 40;
  EXPECT_EQ(openpty(&fds[0], &fds[1], nullptr, &raw, &size), 0);
  return {fds[0], fds[1]};
}

// Runs `gpuidle args...` with stdout and stderr on the sinks asked for, in a clean environment
// plus env; what it wrote to each.
Output RunGpuidle(const std::vector<std::string>& args, Sink out, Sink err,
                  const std::map<std::string, std::string>& env = {}) {
  const auto [out_ours, out_its] = OpenSink(out);
  const auto [err_ours, err_its] = OpenSink(err);
  std::vector<std::string> argv = {GPUIDLE_CLI_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> envs = testing::CleanEnvironment(env);
  std::vector<char*> argp, envp;
  for (std::string& a : argv) argp.push_back(a.data());
  for (std::string& e : envs) envp.push_back(e.data());
  argp.push_back(nullptr);
  envp.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    const int null = open("/dev/null", O_RDONLY);
    dup2(null, STDIN_FILENO);
    dup2(out_its, STDOUT_FILENO);
    dup2(err_its, STDERR_FILENO);
    execve(argp[0], argp.data(), envp.data());
    _exit(127);
  }
  close(out_its);
  close(err_its);
  Output result;
  struct pollfd fds[2] = {{out_ours, POLLIN, 0}, {err_ours, POLLIN, 0}};
  std::string* into[2] = {&result.out, &result.err};
  int open_fds = 2;
  while (open_fds > 0) {
    if (poll(fds, 2, 30'000) <= 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[65536];
      const ssize_t n = read(fds[i].fd, buf, sizeof(buf));
      if (n > 0) {
        into[i]->append(buf, static_cast<size_t>(n));
        continue;
      }
      close(fds[i].fd);  // the end of a pipe; EIO once a pty's other side is closed
      fds[i].fd = -1;
      --open_fds;
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  result.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

TEST(TerminalOutput, ColoursTheSummaryOnATerminal) {
  const Output o = RunGpuidle({"analyze", kTrace}, Sink::kTerminal, Sink::kPipe);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("\x1b[1mgpuidle: why the GPU was idle\x1b[0m"));
  EXPECT_THAT(o.err, Not(HasSubstr("\x1b")));
}

TEST(TerminalOutput, WritesNoColourToAPipe) {
  const Output o = RunGpuidle({"analyze", kTrace}, Sink::kPipe, Sink::kPipe);
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("gpuidle: why the GPU was idle\n"));
  EXPECT_THAT(o.out, Not(HasSubstr("\x1b")));
  EXPECT_THAT(o.err, Not(HasSubstr("\x1b")));
}

TEST(TerminalOutput, HonoursNoColorAndTheColorFlag) {
  const Output no_color =
      RunGpuidle({"analyze", kTrace}, Sink::kTerminal, Sink::kPipe, {{"NO_COLOR", "1"}});
  ASSERT_EQ(no_color.code, 0) << no_color.err;
  EXPECT_THAT(no_color.out, Not(HasSubstr("\x1b")));
  const Output never =
      RunGpuidle({"analyze", "--color", "never", kTrace}, Sink::kTerminal, Sink::kPipe);
  EXPECT_THAT(never.out, Not(HasSubstr("\x1b")));
  const Output always =
      RunGpuidle({"analyze", "--color", "always", kTrace}, Sink::kPipe, Sink::kPipe);
  EXPECT_THAT(always.out, HasSubstr("\x1b[1m"));
  const Output forced =
      RunGpuidle({"analyze", kTrace}, Sink::kPipe, Sink::kPipe, {{"CLICOLOR_FORCE", "1"}});
  EXPECT_THAT(forced.out, HasSubstr("\x1b[1m"));
  const Output bad =
      RunGpuidle({"analyze", "--color", "sometimes", kTrace}, Sink::kPipe, Sink::kPipe);
  EXPECT_EQ(bad.code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--color \"sometimes\": must be auto, always or never"));
}

TEST(TerminalOutput, ColoursNoFileEvenOnATerminal) {
  testing::TempDir dir;
  const std::string path = dir.Path("report.txt");
  const Output o = RunGpuidle({"analyze", "--color", "always", "--out", path, kTrace},
                              Sink::kTerminal, Sink::kTerminal);
  ASSERT_EQ(o.code, 0) << o.err;
  std::ifstream in(path);
  std::stringstream file;
  file << in.rdbuf();
  EXPECT_THAT(file.str(), HasSubstr("gpuidle: why the GPU was idle\n"));
  EXPECT_THAT(file.str(), Not(HasSubstr("\x1b")));
}

// Writes the trace into a FIFO slowly (half, a pause, the rest), so that the read is long.
std::thread FeedSlowly(const std::string& fifo) {
  return std::thread([fifo] {
    std::ifstream in(kTrace, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    const std::string data = bytes.str();
    const int fd = open(fifo.c_str(), O_WRONLY);
    if (fd < 0) return;
    const auto write_all = [&](size_t from, size_t to) {
      while (from < to) {
        const ssize_t n = write(fd, data.data() + from, to - from);
        if (n <= 0) return;
        from += static_cast<size_t>(n);
      }
    };
    write_all(0, data.size() / 2);
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    write_all(data.size() / 2, data.size());
    close(fd);
  });
}

TEST(TerminalOutput, DrawsAProgressBarOnATerminalsStandardErrorAndErasesIt) {
  testing::TempDir dir;
  const std::string fifo = dir.Path("trace.fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::thread feeder = FeedSlowly(fifo);
  const Output o = RunGpuidle({"analyze", fifo}, Sink::kPipe, Sink::kTerminal);
  feeder.join();
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_THAT(o.err, HasSubstr("\r\x1b[Kgpuidle: reading 1 file  "));
  EXPECT_THAT(o.err, EndsWith("MiB\r\x1b[K"));  // erased before the summary
  EXPECT_THAT(o.out, Not(HasSubstr("\x1b")));
  EXPECT_THAT(o.out, Not(HasSubstr("reading")));
}

TEST(TerminalOutput, DrawsNoProgressBarOnAPipeOrWhenQuiet) {
  testing::TempDir dir;
  for (const bool quiet : {false, true}) {
    const std::string fifo = dir.Path(quiet ? "quiet.fifo" : "pipe.fifo");
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    std::thread feeder = FeedSlowly(fifo);
    std::vector<std::string> args = {"analyze", fifo};
    if (quiet) args.push_back("--quiet");
    const Output o = RunGpuidle(args, Sink::kPipe, quiet ? Sink::kTerminal : Sink::kPipe);
    feeder.join();
    ASSERT_EQ(o.code, 0) << o.err;
    EXPECT_EQ(o.err, "") << "quiet " << quiet;
  }
}

}  // namespace
}  // namespace gpuidle::internal
