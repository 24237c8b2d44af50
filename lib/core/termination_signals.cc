#include "core/termination_signals.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <mutex>
#include <thread>

namespace gpuidle::internal {
namespace {

constexpr int kSignals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGABRT};
// The same signal again within this long is the same request (a group's and a forwarder's).
constexpr int64_t kRepeatNs = 1'000'000'000;

std::atomic<TerminationCallback> callback{nullptr};
std::atomic<int64_t> deadline_ms{0};
std::atomic<pid_t> watching_pid{0};
std::atomic<pid_t> watcher_thread{0};
std::atomic<uint32_t> watched{0};          // bit per signal number
std::atomic<int64_t> first_request_ns{0};  // when the request being served arrived
int request_pipe[2] = {-1, -1};            // handler -> watcher: the signal's number
int done_pipe[2] = {-1, -1};               // watcher -> a waiting handler: closed
static_assert(std::atomic<int64_t>::is_always_lock_free && std::atomic<pid_t>::is_always_lock_free);

int64_t MonotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

uint32_t Bit(int signal) { return signal > 0 && signal < 32 ? 1u << signal : 0; }

// From the handler: the default action, once the handler returns (the signal is blocked while
// its handler runs, so the raised one waits until then).
void DefaultActionOnReturn(int signal) {
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  sigaction(signal, &action, nullptr);
  raise(signal);
}

// From a thread of ours: the default action now. The thread unblocks the signal so that it is
// the one that takes it; the process ends there (a core dump where the signal makes one).
[[noreturn]] void EndBySignal(int signal) {
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  sigaction(signal, &action, nullptr);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, signal);
  pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
  raise(signal);
  _exit(128 + signal);  // not reached: every watched signal's default action ends the process
}

// Waits, inside a handler, until the watcher is done or the deadline passed.
void WaitForWatcher(int64_t since_ns) {
  const int64_t until = since_ns + deadline_ms.load() * 1'000'000;
  for (;;) {
    const int64_t left_ms = (until - MonotonicNs()) / 1'000'000;
    if (left_ms <= 0) return;
    pollfd done{done_pipe[0], POLLIN, 0};
    const int r = poll(&done, 1, static_cast<int>(left_ms));
    if (r != 0 && !(r < 0 && errno == EINTR)) return;  // closed (done), or poll failed
  }
}

void OnSignal(int signal, siginfo_t* info, void*) {
  const int saved_errno = errno;
  // raise(), abort(): this very thread asked, and expects not to go on. Waiting is safe here
  // (it sits in raise, holding no lock of CUDA's or gpuidle's); a signal from elsewhere may
  // find a thread inside CUDA, whose locks the watcher's flush could need.
  const bool raised_here = info != nullptr && info->si_code == SI_TKILL && info->si_pid == getpid();
  if (getpid() != watching_pid.load()) {
    DefaultActionOnReturn(signal);  // a forked child: no watcher, and nothing of ours to finish
  } else if (static_cast<pid_t>(syscall(SYS_gettid)) == watcher_thread.load()) {
    DefaultActionOnReturn(signal);  // the callback itself raised: nobody else will finish
  } else {
    const int64_t now = MonotonicNs();
    int64_t expected = 0;
    if (first_request_ns.compare_exchange_strong(expected, now)) {
      const unsigned char byte = static_cast<unsigned char>(signal);
      if (write(request_pipe[1], &byte, 1) != 1) {
        DefaultActionOnReturn(signal);
      } else if (raised_here) {
        WaitForWatcher(now);
      }
    } else if (raised_here) {
      WaitForWatcher(expected);  // the watcher ends the process, however the request came
    } else if (now - expected >= kRepeatNs) {
      DefaultActionOnReturn(signal);  // asked again: end now
    }
  }
  // Back from a wait that ran out (or an abort() that the watcher did not end): the default
  // action, as the raising thread expects.
  if (raised_here && getpid() == watching_pid.load()) DefaultActionOnReturn(signal);
  errno = saved_errno;
}

void Watch() {
  watcher_thread.store(static_cast<pid_t>(syscall(SYS_gettid)));
  unsigned char byte = 0;
  ssize_t n = 0;
  do {
    n = read(request_pipe[0], &byte, 1);
  } while (n < 0 && errno == EINTR);
  if (n != 1) return;  // the pipe failed: the handlers find no reader and end the process
  const int signal = byte;
  const auto deadline = std::chrono::milliseconds(deadline_ms.load());
  std::thread([signal, deadline] {
    std::this_thread::sleep_for(deadline);
    EndBySignal(signal);
  }).detach();
  const TerminationCallback run = callback.load();
  if (run != nullptr) run(signal);
  close(done_pipe[1]);  // wakes a waiting handler
  EndBySignal(signal);
}

}  // namespace

void WatchTerminationSignals(TerminationCallback on_signal, std::chrono::milliseconds deadline) {
  static std::once_flag once;
  std::call_once(once, [&] {
    if (pipe2(request_pipe, O_CLOEXEC) != 0) return;
    if (pipe2(done_pipe, O_CLOEXEC) != 0) return;
    // The handler never blocks on the pipe (one byte is ever written).
    fcntl(request_pipe[1], F_SETFL, fcntl(request_pipe[1], F_GETFL) | O_NONBLOCK);
    callback.store(on_signal);
    deadline_ms.store(deadline.count());
    watching_pid.store(getpid());
    sigset_t mask;
    sigemptyset(&mask);
    uint32_t bits = 0;
    for (int signal : kSignals) {
      struct sigaction old {};
      if (sigaction(signal, nullptr, &old) != 0) continue;
      if ((old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler != SIG_DFL) continue;
      bits |= Bit(signal);
      sigaddset(&mask, signal);
    }
    if (bits == 0) return;
    // The watcher (and the deadline's thread it starts) never takes the signals: a handler
    // running there would wait for itself.
    sigset_t before;
    pthread_sigmask(SIG_BLOCK, &mask, &before);
    std::thread(Watch).detach();
    pthread_sigmask(SIG_SETMASK, &before, nullptr);
    for (int signal : kSignals) {
      if ((bits & Bit(signal)) == 0) continue;
      struct sigaction action {};
      action.sa_sigaction = OnSignal;
      action.sa_flags = SA_SIGINFO | SA_RESTART;
      sigemptyset(&action.sa_mask);
      sigaction(signal, &action, nullptr);
    }
    watched.store(bits);
  });
}

bool WatchesTerminationSignal(int signal) { return (watched.load() & Bit(signal)) != 0; }

}  // namespace gpuidle::internal
