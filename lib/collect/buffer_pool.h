// Preallocated activity buffers for CUPTI. CUPTI asks for a buffer from whatever thread is
// recording (often the application's launching thread), so Acquire() is lock-free and O(1):
// a bounded multi-producer/multi-consumer ring of free buffer indices (Vyukov's design). When
// every buffer is in use, Acquire() returns nullptr and CUPTI drops records, which it counts
// (and gpuidle reports) — memory never grows.
#ifndef GPUIDLE_LIB_COLLECT_BUFFER_POOL_H_
#define GPUIDLE_LIB_COLLECT_BUFFER_POOL_H_

#include <atomic>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace gpuidle::internal {

class BufferPool {
 public:
  // Allocates count buffers of buffer_bytes each (8-byte aligned, as CUPTI requires).
  BufferPool(size_t buffer_bytes, size_t count);
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // A free buffer, stamped with now_ns (when it was handed out), or nullptr if all are in use.
  uint8_t* Acquire(int64_t now_ns = 0);
  // Returns a buffer from Acquire(); anything else, and a buffer returned already, is ignored
  // (false): a buffer handed back twice never enters the free list twice.
  bool Release(uint8_t* buffer);
  // True if buffer is one of the pool's.
  bool Owns(const uint8_t* buffer) const;

  size_t buffer_bytes() const { return buffer_bytes_; }
  size_t count() const { return count_; }
  // Buffers handed out and not yet released.
  size_t in_use() const { return in_use_.load(std::memory_order_relaxed); }
  // Times Acquire() found no free buffer.
  uint64_t exhausted() const { return exhausted_.load(std::memory_order_relaxed); }

  // The buffers handed out at or after since_ns and not returned (a snapshot): how many, and the
  // earliest stamp among them. Buffers that never come back were taken by someone else.
  struct Outstanding {
    size_t count = 0;
    int64_t earliest_ns = 0;
  };
  Outstanding OutstandingSince(int64_t since_ns) const;

 private:
  struct Slot {
    std::atomic<size_t> sequence;
    uint32_t index;
  };
  bool Push(uint32_t index);
  bool Pop(uint32_t* index);

  const size_t buffer_bytes_;
  const size_t count_;
  uint8_t* memory_ = nullptr;
  std::unique_ptr<Slot[]> ring_;  // capacity: a power of two >= count_
  // Per buffer: when it was handed out, or kFree.
  static constexpr int64_t kFree = INT64_MIN;
  std::unique_ptr<std::atomic<int64_t>[]> handed_out_at_;
  size_t mask_ = 0;
  alignas(64) std::atomic<size_t> enqueue_pos_{0};
  alignas(64) std::atomic<size_t> dequeue_pos_{0};
  std::atomic<size_t> in_use_{0};
  std::atomic<uint64_t> exhausted_{0};
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_COLLECT_BUFFER_POOL_H_
