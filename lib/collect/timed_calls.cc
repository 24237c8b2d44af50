#include "collect/timed_calls.h"

#include <algorithm>
#include <new>

namespace gpuidle::internal {
namespace {

// A chunk: a header (the number of calls written, published with release), then the calls.
constexpr size_t kHeaderBytes = 64;

std::atomic<uint32_t>& SizeOf(uint8_t* chunk) {
  return *std::launder(reinterpret_cast<std::atomic<uint32_t>*>(chunk));
}
TimedCall* CallsOf(uint8_t* chunk) { return reinterpret_cast<TimedCall*>(chunk + kHeaderBytes); }

}  // namespace

// The chunk this thread appends to, and the collection it belongs to. At thread exit the chunk
// goes to the collector at once, so threads that come and go do not each keep one; calls the
// thread makes after that (from other thread_local or static destructors) are dropped.
struct TimedCallLog::ThreadChunk {
  uint8_t* chunk = nullptr;
  uint64_t collection = 0;
  bool exited = false;
  ~ThreadChunk() {
    exited = true;
    uint8_t* mine = chunk;
    chunk = nullptr;
    TimedCallLog& log = TimedCallLog::Get();
    // Checked before locking: in a forked child (exit() runs this for its one thread) the
    // collection was abandoned, and its lock may have been held by a thread of the parent.
    if (mine == nullptr || collection != log.collection_.load()) return;
    std::lock_guard<std::mutex> lock(log.mu_);
    if (collection == log.collection_.load()) log.HandOverLocked(mine);
  }
};

TimedCallLog& TimedCallLog::Get() {
  static TimedCallLog* log = new TimedCallLog();  // process lifetime: threads exit any time
  return *log;
}

size_t TimedCallLog::ChunkBytes(size_t calls) { return kHeaderBytes + calls * sizeof(TimedCall); }

absl::Span<const TimedCall> TimedCallLog::Calls(const uint8_t* chunk) {
  uint8_t* c = const_cast<uint8_t*>(chunk);
  return absl::Span<const TimedCall>(CallsOf(c), SizeOf(c).load(std::memory_order_acquire));
}

void TimedCallLog::Start(BufferPool* pool, HandOver hand_over) {
  std::lock_guard<std::mutex> lock(mu_);
  pool_ = pool;
  hand_over_ = hand_over;
  capacity_ = pool->buffer_bytes() > kHeaderBytes
                  ? (pool->buffer_bytes() - kHeaderBytes) / sizeof(TimedCall)
                  : 0;
  held_.clear();
  held_.reserve(pool->count());  // no allocation inside CUPTI's callbacks
  dropped_ = 0;
  collection_.fetch_add(1);
  taking_.store(true, std::memory_order_release);
}

std::vector<uint8_t*> TimedCallLog::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  taking_ = false;
  collection_.fetch_add(1);
  std::vector<uint8_t*> held;
  held.swap(held_);
  return held;
}

void TimedCallLog::AbandonAfterFork() {
  new (&mu_) std::mutex();
  held_.clear();  // the parent's chunks: never handed over or released here
  taking_ = false;
  collection_.fetch_add(1);
}

void TimedCallLog::HandOverLocked(uint8_t* chunk) {
  // Only a chunk this collection handed out, and only once.
  auto it = std::find(held_.begin(), held_.end(), chunk);
  if (it == held_.end()) return;
  held_.erase(it);
  hand_over_(chunk);
}

bool TimedCallLog::Replace(ThreadChunk& t, uint64_t collection) {
  std::lock_guard<std::mutex> lock(mu_);
  if (collection_.load() != collection || !taking_.load()) return false;
  if (t.chunk != nullptr && t.collection == collection) HandOverLocked(t.chunk);
  t.chunk = capacity_ > 0 ? pool_->Acquire() : nullptr;
  t.collection = collection;
  if (t.chunk == nullptr) return false;
  new (t.chunk) std::atomic<uint32_t>(0);
  held_.push_back(t.chunk);
  return true;
}

void TimedCallLog::Append(const TimedCall& call) {
  static thread_local ThreadChunk t;
  if (!taking_.load(std::memory_order_acquire) || t.exited) return;
  const uint64_t collection = collection_.load(std::memory_order_acquire);
  const bool current = t.chunk != nullptr && t.collection == collection;
  if (!current || SizeOf(t.chunk).load(std::memory_order_relaxed) == capacity_) {
    // With the pool empty, drop without taking the lock at every call of every thread.
    const bool pool_empty = pool_->in_use() >= pool_->count();
    if ((t.chunk == nullptr && t.collection == collection && pool_empty) ||
        !Replace(t, collection)) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
  std::atomic<uint32_t>& size = SizeOf(t.chunk);
  const uint32_t n = size.load(std::memory_order_relaxed);
  CallsOf(t.chunk)[n] = call;
  size.store(n + 1, std::memory_order_release);
}

}  // namespace gpuidle::internal
