// A last chance to finish work when the process is told to end: SIGTERM (schedulers' time
// limits and preemption, torchrun's failed peers), SIGINT, SIGHUP, SIGQUIT, and SIGABRT
// (abort(), an uncaught C++ exception).
//
// WatchTerminationSignals installs a handler for each of those signals whose action is still
// the default one (a signal the program handles or ignores stays the program's). When one
// arrives, the handler only writes its number to a pipe (async-signal-safe); a thread of its
// own, started at installation, then runs the callback and afterwards lets the signal's default
// action happen as it would have: the process ends by that signal (exit status, core dump).
// If the callback has not returned within the deadline, the default action happens anyway.
//
// While the callback runs the program goes on (a thread the signal found inside CUDA may hold a
// lock the callback needs), except the thread that raised the signal itself (raise(), abort(),
// which expect not to return): its handler waits for the callback, up to the deadline.
// The same signal again within a second (a process group's SIGTERM, then the same signal
// forwarded by `gpuidle run`) is one request; another one later ends the process at once (a
// second Ctrl-C). In a forked child, and when the callback has nothing to do, the default
// action happens at once.
#ifndef GPUIDLE_LIB_CORE_TERMINATION_SIGNALS_H_
#define GPUIDLE_LIB_CORE_TERMINATION_SIGNALS_H_

#include <chrono>

namespace gpuidle::internal {

// Runs on the watching thread with the signal's number; the process ends when it returns.
using TerminationCallback = void (*)(int signal);

// Once per process; later calls change nothing. Signals whose action is not the default at the
// time of the call are left alone for good.
void WatchTerminationSignals(TerminationCallback callback, std::chrono::milliseconds deadline);

// The signals watched (those whose action was the default when WatchTerminationSignals ran).
bool WatchesTerminationSignal(int signal);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_CORE_TERMINATION_SIGNALS_H_
