#include "collect/buffer_pool.h"

#include <algorithm>
#include <cstdlib>

namespace gpuidle::internal {
namespace {

constexpr size_t kAlignment = 8;

size_t RoundUpToPowerOfTwo(size_t n) {
  size_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

}  // namespace

BufferPool::BufferPool(size_t buffer_bytes, size_t count)
    : buffer_bytes_((buffer_bytes + kAlignment - 1) / kAlignment * kAlignment),
      count_(count),
      mask_(RoundUpToPowerOfTwo(count == 0 ? 1 : count) - 1) {
  const size_t total = buffer_bytes_ * count_;
  memory_ = static_cast<uint8_t*>(std::aligned_alloc(kAlignment, total == 0 ? kAlignment : total));
  if (memory_ == nullptr) return;  // an empty pool: every Acquire() fails, CUPTI drops
  ring_ = std::make_unique<Slot[]>(mask_ + 1);
  handed_out_at_ = std::make_unique<std::atomic<int64_t>[]>(count_);
  for (size_t i = 0; i < count_; ++i) handed_out_at_[i].store(kFree, std::memory_order_relaxed);
  for (size_t i = 0; i <= mask_; ++i) ring_[i].sequence.store(i, std::memory_order_relaxed);
  for (size_t i = 0; i < count_; ++i) Push(static_cast<uint32_t>(i));
}

BufferPool::~BufferPool() { std::free(memory_); }

bool BufferPool::Push(uint32_t index) {
  size_t pos = enqueue_pos_.load(std::memory_order_relaxed);
  for (;;) {
    Slot& slot = ring_[pos & mask_];
    const size_t seq = slot.sequence.load(std::memory_order_acquire);
    const intptr_t diff = static_cast<intptr_t>(seq) - static_cast<intptr_t>(pos);
    if (diff == 0) {
      if (enqueue_pos_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
        slot.index = index;
        slot.sequence.store(pos + 1, std::memory_order_release);
        return true;
      }
    } else if (diff < 0) {
      // The slot's last index is still being taken out (a Pop between its claim and its
      // release of the slot): wait for it. Giving up would lose the buffer for good. Only a ring
      // holding more than its capacity is full, which cannot happen: it holds every index once.
      const intptr_t queued = static_cast<intptr_t>(pos) -
                              static_cast<intptr_t>(dequeue_pos_.load(std::memory_order_acquire));
      if (queued > static_cast<intptr_t>(mask_)) return false;
      pos = enqueue_pos_.load(std::memory_order_relaxed);
    } else {
      pos = enqueue_pos_.load(std::memory_order_relaxed);
    }
  }
}

bool BufferPool::Pop(uint32_t* index) {
  size_t pos = dequeue_pos_.load(std::memory_order_relaxed);
  for (;;) {
    Slot& slot = ring_[pos & mask_];
    const size_t seq = slot.sequence.load(std::memory_order_acquire);
    const intptr_t diff = static_cast<intptr_t>(seq) - static_cast<intptr_t>(pos + 1);
    if (diff == 0) {
      if (dequeue_pos_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
        *index = slot.index;
        slot.sequence.store(pos + mask_ + 1, std::memory_order_release);
        return true;
      }
    } else if (diff < 0) {
      return false;  // empty
    } else {
      pos = dequeue_pos_.load(std::memory_order_relaxed);
    }
  }
}

uint8_t* BufferPool::Acquire(int64_t now_ns) {
  uint32_t index;
  if (memory_ == nullptr || !Pop(&index)) {
    exhausted_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  handed_out_at_[index].store(now_ns == kFree ? kFree + 1 : now_ns, std::memory_order_release);
  in_use_.fetch_add(1, std::memory_order_relaxed);
  return memory_ + static_cast<size_t>(index) * buffer_bytes_;
}

bool BufferPool::Owns(const uint8_t* buffer) const {
  if (memory_ == nullptr || buffer < memory_ || buffer >= memory_ + buffer_bytes_ * count_) {
    return false;
  }
  return static_cast<size_t>(buffer - memory_) % buffer_bytes_ == 0;
}

bool BufferPool::Release(uint8_t* buffer) {
  if (!Owns(buffer)) return false;
  const auto index = static_cast<uint32_t>(static_cast<size_t>(buffer - memory_) / buffer_bytes_);
  if (handed_out_at_[index].exchange(kFree, std::memory_order_acq_rel) == kFree) return false;
  in_use_.fetch_sub(1, std::memory_order_relaxed);
  return Push(index);
}

BufferPool::Outstanding BufferPool::OutstandingSince(int64_t since_ns) const {
  Outstanding o;
  if (memory_ == nullptr) return o;
  for (size_t i = 0; i < count_; ++i) {
    const int64_t at = handed_out_at_[i].load(std::memory_order_acquire);
    if (at == kFree || at < since_ns) continue;
    o.earliest_ns = o.count == 0 ? at : std::min(o.earliest_ns, at);
    ++o.count;
  }
  return o;
}

}  // namespace gpuidle::internal
