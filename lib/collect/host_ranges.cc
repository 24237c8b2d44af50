#include "collect/host_ranges.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <new>
#include <utility>

#include "collect/clock.h"

namespace gpuidle::internal {
namespace {

struct OpenOnThread {
  uintptr_t stack;
  int64_t start_ns;
  RangeKind kind;
  uint64_t session;  // the recording it was opened in; 0 if opened while not recording
  std::string name;
};

// Per-thread stacks of all domains in one vector: pops search back for their domain, which is
// the top in the common (single-domain, or well-nested) case. Held by a plain pointer, not a
// thread_local object: those are destroyed before atexit handlers run, and NVTX calls can come
// that late. Only threads that use ranges allocate one (a few hundred bytes).
thread_local std::vector<OpenOnThread>* open_ranges_of_thread = nullptr;

void FreeOpenRanges(void* ranges) {
  delete static_cast<std::vector<OpenOnThread>*>(ranges);
  open_ranges_of_thread = nullptr;
}

// Frees a thread's stacks when the thread ends, so that programs that start many threads do not
// leak one per thread. A pthread key's destructor runs after the thread's thread_local
// destructors (which may still push and pop), and never for the main thread at exit(), whose
// stacks stay for the atexit handlers. Without a key (all taken) the stacks are left as before.
struct ThreadExitKey {
  ThreadExitKey() : ok(pthread_key_create(&key, &FreeOpenRanges) == 0) {}
  pthread_key_t key;
  bool ok;
};

std::vector<OpenOnThread>& OpenRanges() {
  if (open_ranges_of_thread == nullptr) {
    open_ranges_of_thread = new std::vector<OpenOnThread>();
    static const ThreadExitKey exit_key;
    if (exit_key.ok) pthread_setspecific(exit_key.key, open_ranges_of_thread);
  }
  return *open_ranges_of_thread;
}

}  // namespace

uint64_t CurrentThreadId() {
  thread_local const uint64_t tid = static_cast<uint64_t>(syscall(SYS_gettid));
  return tid;
}

HostRangeRecorder& HostRangeRecorder::Get() {
  static HostRangeRecorder* recorder = new HostRangeRecorder();
  return *recorder;
}

void HostRangeRecorder::SetRecording(bool on) {
  std::lock_guard<std::mutex> lock(mu_);
  if (on) {
    session_.fetch_add(1, std::memory_order_relaxed);
    started_.clear();
  }
  recording_.store(on, std::memory_order_relaxed);
}

void HostRangeRecorder::Push(uintptr_t stack, RangeKind kind, absl::string_view name) {
  const bool on = recording();
  std::vector<OpenOnThread>& open_ranges = OpenRanges();
  // Unrecorded pushes are kept too (without a name) so that their pops pair up.
  open_ranges.push_back(OpenOnThread{stack, on ? TimelineNowNs() : 0, kind,
                                     on ? session_.load(std::memory_order_relaxed) : 0,
                                     on ? std::string(name) : std::string()});
}

void HostRangeRecorder::Pop(uintptr_t stack) {
  std::vector<OpenOnThread>& open_ranges = OpenRanges();
  for (size_t i = open_ranges.size(); i-- > 0;) {
    if (open_ranges[i].stack != stack) continue;
    OpenOnThread open = std::move(open_ranges[i]);
    open_ranges.erase(open_ranges.begin() + static_cast<ptrdiff_t>(i));
    // Opened while not recording, or in an earlier recording: not this recording's range.
    if (open.session == 0 || !recording() ||
        open.session != session_.load(std::memory_order_relaxed)) {
      return;
    }
    const int64_t end = TimelineNowNs();
    std::lock_guard<std::mutex> lock(mu_);
    KeepLocked(Closed{open.start_ns, end, CurrentThreadId(), open.kind, std::move(open.name)});
    return;
  }
  // A pop without a push (unbalanced NVTX use in the program): nothing to close.
}

void HostRangeRecorder::Start(uint64_t id, RangeKind kind, absl::string_view name) {
  if (!recording()) return;
  const int64_t now = TimelineNowNs();
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_.size() + started_.size() >= limit_) {
    ++dropped_;
    return;
  }
  started_[id] = Open{now, CurrentThreadId(), kind, std::string(name), true};
}

void HostRangeRecorder::End(uint64_t id) {
  if (!recording()) return;
  const int64_t now = TimelineNowNs();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = started_.find(id);
  if (it == started_.end()) return;
  Closed c{it->second.start_ns, now, it->second.thread, it->second.kind,
           std::move(it->second.name)};
  started_.erase(it);
  KeepLocked(std::move(c));
}

void HostRangeRecorder::KeepLocked(Closed c) {
  if (closed_.size() + started_.size() >= limit_) {
    ++dropped_;
    return;
  }
  closed_.push_back(std::move(c));
}

void HostRangeRecorder::SetLimit(size_t limit) {
  std::lock_guard<std::mutex> lock(mu_);
  limit_ = limit;
}

void HostRangeRecorder::MoveInto(Timeline* timeline) {
  std::vector<Closed> closed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed.swap(closed_);
    timeline->info.dropped_records = timeline->info.dropped_records.value_or(0) + dropped_;
    dropped_ = 0;
  }
  timeline->ranges.reserve(timeline->ranges.size() + closed.size());
  for (Closed& c : closed) {
    Range r;
    r.start_ns = c.start_ns;
    r.end_ns = c.end_ns;
    r.thread = c.thread;
    r.kind = c.kind;
    r.name = timeline->strings.Intern(c.name);
    timeline->ranges.push_back(r);
  }
}

void HostRangeRecorder::ResetAfterFork() {
  // The mutex may have been held by a thread that does not exist in the child: rebuild it.
  new (&mu_) std::mutex();
  recording_.store(false, std::memory_order_relaxed);
  closed_.clear();
  started_.clear();
  dropped_ = 0;
}

}  // namespace gpuidle::internal
