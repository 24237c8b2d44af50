// Host ranges recorded live: gpuidle's own markers (steps, data waits, user ranges) and the
// NVTX ranges of the program and its libraries (NCCL, PyTorch). Push/pop stacks are per thread
// and per NVTX domain, as NVTX defines them; start/end ranges may end on another thread.
//
// Cheap when off: one relaxed atomic load. While recording, a closed range costs a mutex'd
// append (ranges are per step, data wait, collective and sync call site, not per kernel).
// Bounded: past the limit ranges are dropped and counted with the lost records.
#ifndef GPUIDLE_LIB_COLLECT_HOST_RANGES_H_
#define GPUIDLE_LIB_COLLECT_HOST_RANGES_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "model/timeline.h"

namespace gpuidle::internal {

// The id of the calling thread, as CUPTI reports it (CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM).
uint64_t CurrentThreadId();

class HostRangeRecorder {
 public:
  // The process's recorder (never destroyed: NVTX calls may come during exit).
  static HostRangeRecorder& Get();

  // Starts or stops keeping ranges. Ranges open when recording stops are dropped.
  void SetRecording(bool on);
  bool recording() const { return recording_.load(std::memory_order_relaxed); }

  // Nested ranges of (thread, stack). stack tells NVTX domains apart; 0 for gpuidle's markers.
  void Push(uintptr_t stack, RangeKind kind, absl::string_view name);
  void Pop(uintptr_t stack);
  // Start/end ranges, matched by id (any thread).
  void Start(uint64_t id, RangeKind kind, absl::string_view name);
  void End(uint64_t id);

  // Ranges kept at most per recording (closed ones and started ones not yet ended).
  static constexpr size_t kDefaultLimit = size_t{1} << 20;
  void SetLimit(size_t limit);

  // Moves the closed ranges into timeline (interning names) and adds the dropped ones to its
  // lost records; clears them.
  void MoveInto(Timeline* timeline);

  // After fork(): the child never records (and must not wait on a lock held by a parent thread).
  void ResetAfterFork();

 private:
  struct Closed {
    int64_t start_ns;
    int64_t end_ns;
    uint64_t thread;
    RangeKind kind;
    std::string name;
  };
  struct Open {
    int64_t start_ns;
    uint64_t thread;
    RangeKind kind;
    std::string name;
    bool recorded;  // opened while recording
  };

  std::atomic<bool> recording_{false};
  // Counts the times recording started: a push/pop range of an earlier recording is dropped.
  std::atomic<uint64_t> session_{0};
  // Keeps c unless the limit is reached (then counts it). Under mu_.
  void KeepLocked(Closed c);

  std::mutex mu_;
  size_t limit_ = kDefaultLimit;
  uint64_t dropped_ = 0;
  std::vector<Closed> closed_;
  absl::flat_hash_map<uint64_t, Open> started_;  // start/end ranges by id
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_COLLECT_HOST_RANGES_H_
