// The launch, sync, copy and wait-event calls that gpuidle times itself, in CUPTI's API
// callbacks (ApiRecords::kCallbacks), instead of asking CUPTI for an activity record per call.
// CUPTI's API records cost ~1 us per launch on the H200 (docs/PERFORMANCE.md) and, when a
// collection starts after CUDA was initialised, can only be had by intercepting every API call;
// callbacks are enabled per id at any time.
//
// Each thread appends to a chunk of its own (no lock, no atomic read-modify-write per call); a
// full chunk goes to the collector's decode thread, and a fresh one comes from a preallocated
// pool. When the pool is empty, calls are dropped and counted (the report shows them as lost
// records): memory never grows.
#ifndef GPUIDLE_LIB_COLLECT_TIMED_CALLS_H_
#define GPUIDLE_LIB_COLLECT_TIMED_CALLS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "absl/types/span.h"
#include "collect/buffer_pool.h"

namespace gpuidle::internal {

struct TimedCall {
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t correlation = 0;  // CUPTI's: the same as its kernel, copy and sync records'
  uint32_t thread = 0;       // the OS thread id (gettid)
  uint32_t cbid = 0;
  uint32_t driver = 0;  // 1: a driver API call, 0: a runtime API call
};

class TimedCallLog {
 public:
  // Receives each full chunk (on an application thread); must take it (decode, then Release).
  using HandOver = void (*)(uint8_t* chunk);

  static TimedCallLog& Get();

  // Starts taking calls into chunks of pool (which outlives the log's use of it).
  void Start(BufferPool* pool, HandOver hand_over);
  // On the calling thread: no lock but when its chunk is full (or it has none yet).
  void Append(const TimedCall& call);
  // Stops taking calls; returns the chunks threads still held (partly filled), which the caller
  // decodes. A thread inside Append at this moment may still write its one call into its chunk
  // after that: the caller keeps these chunks out of the pool until the next collection has
  // stopped (Collector::Stop), so that such a late write never lands in a chunk in use.
  std::vector<uint8_t*> Stop();
  // In a forked child: forget the parent's collection without taking its lock (a thread of the
  // parent may have held it; that thread does not exist here).
  void AbandonAfterFork();
  // Calls appended but dropped for want of a chunk, since Start.
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

  // The calls written into a chunk so far.
  static absl::Span<const TimedCall> Calls(const uint8_t* chunk);
  // The bytes a chunk of `calls` calls needs (its header included).
  static size_t ChunkBytes(size_t calls);

 private:
  struct ThreadChunk;
  TimedCallLog() = default;
  // A fresh chunk for t (handing its full one over); false if none is left.
  bool Replace(ThreadChunk& t, uint64_t collection);
  // Hands a chunk of this collection over, once. Under mu_ (which is taken before the
  // collector's lock, in hand_over_, and never after it).
  void HandOverLocked(uint8_t* chunk);

  std::mutex mu_;
  std::vector<uint8_t*> held_;  // chunks threads hold, this collection
  BufferPool* pool_ = nullptr;
  HandOver hand_over_ = nullptr;
  std::atomic<size_t> capacity_{0};  // calls per chunk
  std::atomic<bool> taking_{false};
  // Bumped by Start and Stop, so a thread's chunk of an earlier collection is never reused.
  std::atomic<uint64_t> collection_{0};
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_COLLECT_TIMED_CALLS_H_
