// A wall-clock stack sampler of one thread, loaded through ctypes by
// tests/benchmarks/python/where_time_goes.py (issue 26, part 1): the GPU machine has no perf,
// and the leave-out rounds could not price parts smaller than the rounds' spread. A lab probe:
// never part of the product.
//
// gpuidle_sampler_start(hz) samples the calling thread hz times a second of wall time (a
// CLOCK_MONOTONIC timer delivered to that thread only); each tick taken while the label is not
// 0 keeps the label and the interrupted stack (the leaf from the signal's context, its callers
// from glibc's unwinder when GPUIDLE_SAMPLER_CALLERS is set). gpuidle_sampler_dump(path) writes one
// line per sample: the label, then each frame as object+offset, the objects' paths in a header, for
// the script to resolve.
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

namespace {

constexpr int kDepth = 40;
constexpr size_t kCapacity = 400000;  // ~130 MB: 100 s at 4 kHz

struct Sample {
  int label;
  int depth;
  void* pc[kDepth];
};

Sample* samples = nullptr;
std::atomic<size_t> used{0};
std::atomic<size_t> missed{0};
std::atomic<int> label{0};
std::atomic<bool> in_handler{false};
timer_t timer{};
bool with_callers = false;
bool running = false;

void OnTick(int, siginfo_t*, void* context) {
  const int l = label.load(std::memory_order_relaxed);
  if (l == 0 || in_handler.exchange(true)) return;
  const size_t i = used.fetch_add(1, std::memory_order_relaxed);
  if (i >= kCapacity) {
    missed.fetch_add(1, std::memory_order_relaxed);
  } else {
    Sample& s = samples[i];
    s.label = l;
    const auto* uc = static_cast<const ucontext_t*>(context);
    s.pc[0] = reinterpret_cast<void*>(uc->uc_mcontext.gregs[REG_RIP]);
    s.depth = 1;
    // The callers, only where asked: glibc's unwinder crashed in a PyTorch process on the H200
    // (exit 139) and hung in another; the leaf alone prices each object's own time.
    if (with_callers) {
      void* frames[kDepth + 2];
      const int n = backtrace(frames, kDepth + 2);
      // Frames 0 and 1 are this handler and the signal trampoline; 2 is the interrupted pc.
      for (int f = 3; f < n && s.depth < kDepth; ++f) s.pc[s.depth++] = frames[f];
    }
  }
  in_handler.store(false);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int gpuidle_sampler_start(int hz) {
  if (running || hz <= 0) return 0;
  samples = static_cast<Sample*>(std::calloc(kCapacity, sizeof(Sample)));
  if (samples == nullptr) return 0;
  with_callers = std::getenv("GPUIDLE_SAMPLER_CALLERS") != nullptr;
  void* warm[4];
  if (with_callers) backtrace(warm, 4);  // loads the unwinder now, not inside the first signal
  struct sigaction sa {};
  sa.sa_sigaction = OnTick;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGPROF, &sa, nullptr) != 0) return 0;
  struct sigevent ev {};
  ev.sigev_notify = SIGEV_THREAD_ID;
  ev.sigev_signo = SIGPROF;
  ev._sigev_un._tid = static_cast<pid_t>(syscall(SYS_gettid));
  if (timer_create(CLOCK_MONOTONIC, &ev, &timer) != 0) return 0;
  const long period_ns = 1000000000L / hz;
  struct itimerspec spec {};
  spec.it_interval.tv_sec = period_ns / 1000000000L;
  spec.it_interval.tv_nsec = period_ns % 1000000000L;
  spec.it_value = spec.it_interval;
  if (timer_settime(timer, 0, &spec, nullptr) != 0) return 0;
  running = true;
  return 1;
}

extern "C" __attribute__((visibility("default"))) void gpuidle_sampler_label(int l) {
  label.store(l, std::memory_order_relaxed);
}

// Stops sampling and writes the samples; the number written, or -1.
extern "C" __attribute__((visibility("default"))) long gpuidle_sampler_dump(const char* path) {
  if (!running) return -1;
  label.store(0);
  timer_delete(timer);
  running = false;
  FILE* f = std::fopen(path, "w");
  if (f == nullptr) return -1;
  const size_t n = std::min(used.load(), kCapacity);
  std::map<std::string, int> objects;
  std::string line;
  for (size_t i = 0; i < n; ++i) {
    const Sample& s = samples[i];
    line = std::to_string(s.label);
    for (int d = 0; d < s.depth; ++d) {
      Dl_info info{};
      // A return address points after its call: look up the byte before it.
      void* at = d == 0 ? s.pc[d] : static_cast<char*>(s.pc[d]) - 1;
      if (dladdr(at, &info) == 0 || info.dli_fname == nullptr) {
        line += " ?";
        continue;
      }
      auto [it, added] = objects.try_emplace(info.dli_fname, static_cast<int>(objects.size()));
      if (added) std::fprintf(f, "object %d %s\n", it->second, info.dli_fname);
      char frame[64];
      std::snprintf(
          frame, sizeof frame, " %d+%lx", it->second,
          static_cast<unsigned long>(static_cast<char*>(at) - static_cast<char*>(info.dli_fbase)));
      line += frame;
    }
    std::fprintf(f, "sample %s\n", line.c_str());
  }
  std::fprintf(f, "missed %zu\n", missed.load());
  std::fclose(f);
  std::free(samples);
  samples = nullptr;
  return static_cast<long>(n);
}
