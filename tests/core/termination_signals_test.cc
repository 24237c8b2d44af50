#include "core/termination_signals.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>

#include "gtest/gtest.h"

namespace gpuidle::internal {
namespace {

using std::chrono::milliseconds;

// Each case runs in a child process of its own (the watch is once per process): what the child
// wrote to `out`, and how it ended.
int out_fd = -1;

void Say(const char* text) {
  if (write(out_fd, text, std::strlen(text)) < 0) _exit(90);
}

struct Ending {
  int status = 0;
  std::string said;
  double seconds = 0;
};

Ending RunChild(const std::function<void()>& body) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  const auto began = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    out_fd = fds[1];
    const rlimit no_core{0, 0};  // SIGQUIT and SIGABRT would dump a core each
    setrlimit(RLIMIT_CORE, &no_core);
    body();
    _exit(0);
  }
  close(fds[1]);
  Ending e;
  char buffer[256];
  ssize_t n = 0;
  while ((n = read(fds[0], buffer, sizeof buffer)) > 0) e.said.append(buffer, n);
  close(fds[0]);
  waitpid(pid, &e.status, 0);
  e.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  return e;
}

bool KilledBy(const Ending& e, int signal) {
  return WIFSIGNALED(e.status) && WTERMSIG(e.status) == signal;
}

void Finish(int signal) { Say(signal == SIGTERM ? "finished TERM;" : "finished;"); }

void SlowFinish(int) {
  Say("started;");
  std::this_thread::sleep_for(milliseconds(300));
  Say("finished;");
}

void Hang(int) {
  Say("started;");
  std::this_thread::sleep_for(std::chrono::seconds(60));
  Say("finished;");
}

void NothingToDo(int) {}

// The program goes on after the signal until the watcher ends it.
[[noreturn]] void RunOn() {
  for (;;) pause();
}

TEST(TerminationSignalsTest, DefaultActionComesAfterTheCallback) {
  for (int signal : {SIGTERM, SIGINT, SIGHUP, SIGQUIT}) {
    const Ending e = RunChild([signal] {
      WatchTerminationSignals(&Finish, milliseconds(5000));
      if (!WatchesTerminationSignal(signal)) Say("not watched;");
      kill(getpid(), signal);
      RunOn();
    });
    EXPECT_TRUE(KilledBy(e, signal)) << "signal " << signal << ", status " << e.status;
    EXPECT_NE(e.said.find("finished"), std::string::npos) << e.said;
    EXPECT_EQ(e.said.find("not watched"), std::string::npos);
  }
}

TEST(TerminationSignalsTest, AbortWaitsForTheCallback) {
  const Ending e = RunChild([] {
    WatchTerminationSignals(&SlowFinish, milliseconds(5000));
    std::abort();
  });
  EXPECT_TRUE(KilledBy(e, SIGABRT)) << e.status;
  EXPECT_EQ(e.said, "started;finished;");
}

TEST(TerminationSignalsTest, RaiseWaitsForTheCallback) {
  const Ending e = RunChild([] {
    WatchTerminationSignals(&SlowFinish, milliseconds(5000));
    raise(SIGTERM);
    Say("went on after raise;");
  });
  EXPECT_TRUE(KilledBy(e, SIGTERM)) << e.status;
  EXPECT_EQ(e.said, "started;finished;");
}

TEST(TerminationSignalsTest, ASignalFromElsewhereLetsTheProgramGoOn) {
  const Ending e = RunChild([] {
    WatchTerminationSignals(&SlowFinish, milliseconds(5000));
    kill(getpid(), SIGTERM);
    Say("went on;");
    RunOn();
  });
  EXPECT_TRUE(KilledBy(e, SIGTERM)) << e.status;
  EXPECT_NE(e.said.find("went on;"), std::string::npos) << e.said;
  EXPECT_NE(e.said.find("finished;"), std::string::npos) << e.said;
}

TEST(TerminationSignalsTest, TheProgramsOwnHandlerStaysInCharge) {
  const Ending e = RunChild([] {
    struct sigaction own {};
    own.sa_handler = [](int) { Say("program's handler;"); };
    sigemptyset(&own.sa_mask);
    sigaction(SIGTERM, &own, nullptr);
    signal(SIGHUP, SIG_IGN);
    WatchTerminationSignals(&Finish, milliseconds(5000));
    if (WatchesTerminationSignal(SIGTERM) || WatchesTerminationSignal(SIGHUP)) Say("watched;");
    kill(getpid(), SIGTERM);
    kill(getpid(), SIGHUP);
    std::this_thread::sleep_for(milliseconds(200));
    Say("ran on;");
  });
  EXPECT_TRUE(WIFEXITED(e.status) && WEXITSTATUS(e.status) == 0) << e.status;
  EXPECT_EQ(e.said, "program's handler;ran on;");
}

TEST(TerminationSignalsTest, AHandlerSetLaterReplacesTheWatch) {
  const Ending e = RunChild([] {
    WatchTerminationSignals(&Finish, milliseconds(5000));
    signal(SIGTERM, [](int) { Say("program's handler;"); });
    kill(getpid(), SIGTERM);
    std::this_thread::sleep_for(milliseconds(200));
    Say("ran on;");
  });
  EXPECT_TRUE(WIFEXITED(e.status) && WEXITSTATUS(e.status) == 0) << e.status;
  EXPECT_EQ(e.said, "program's handler;ran on;");
}

TEST(TerminationSignalsTest, TheDeadlineEndsAHangingCallback) {
  const Ending e = RunChild([] {
    WatchTerminationSignals(&Hang, milliseconds(300));
    kill(getpid(), SIGTERM);
    RunOn();
  });
  EXPECT_TRUE(KilledBy(e, SIGTERM)) << e.status;
  EXPECT_EQ(e.said, "started;");
  EXPECT_LT(e.seconds, 30.0);
}

TEST(TerminationSignalsTest, TheSameSignalTwiceAtOnceIsOneRequest) {
  // A process group's SIGTERM and the one `gpuidle run` forwards.
  const Ending e = RunChild([] {
    WatchTerminationSignals(&SlowFinish, milliseconds(5000));
    kill(getpid(), SIGTERM);
    std::this_thread::sleep_for(milliseconds(50));
    kill(getpid(), SIGTERM);
    RunOn();
  });
  EXPECT_TRUE(KilledBy(e, SIGTERM)) << e.status;
  EXPECT_EQ(e.said, "started;finished;");
}

TEST(TerminationSignalsTest, AskingAgainLaterEndsAtOnce) {
  const Ending e = RunChild([] {
    WatchTerminationSignals(&Hang, milliseconds(20000));
    kill(getpid(), SIGINT);
    std::this_thread::sleep_for(milliseconds(1300));
    kill(getpid(), SIGINT);
    RunOn();
  });
  EXPECT_TRUE(KilledBy(e, SIGINT)) << e.status;
  EXPECT_EQ(e.said, "started;");
  EXPECT_LT(e.seconds, 15.0);
}

TEST(TerminationSignalsTest, NothingToDoEndsAtOnce) {
  const Ending e = RunChild([] {
    WatchTerminationSignals(&NothingToDo, milliseconds(20000));
    kill(getpid(), SIGTERM);
    RunOn();
  });
  EXPECT_TRUE(KilledBy(e, SIGTERM)) << e.status;
  EXPECT_LT(e.seconds, 15.0);
}

TEST(TerminationSignalsTest, AForkedChildEndsAsItWould) {
  const Ending e = RunChild([] {
    WatchTerminationSignals(&Finish, milliseconds(5000));
    const pid_t child = fork();
    if (child == 0) {
      kill(getpid(), SIGTERM);
      RunOn();
    }
    int status = 0;
    waitpid(child, &status, 0);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) Say("child killed by SIGTERM;");
  });
  EXPECT_TRUE(WIFEXITED(e.status) && WEXITSTATUS(e.status) == 0) << e.status;
  EXPECT_EQ(e.said, "child killed by SIGTERM;");
}

}  // namespace
}  // namespace gpuidle::internal
