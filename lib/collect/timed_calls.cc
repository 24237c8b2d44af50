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
// goes to the collector at once, so threads that come and go do not each keep one.
struct TimedCallLog::ThreadChunk {
  uint8_t* chunk = nullptr;
  uint64_t generation = 0;
  ~ThreadChunk() {
    TimedCallLog& log = TimedCallLog::Get();
    // Checked before locking: in a forked child (exit() runs this for its one thread) the
    // collection was abandoned, and its lock may have been held by a thread of the parent.
    if (chunk == nullptr || generation != log.generation_.load()) return;
    std::lock_guard<std::mutex> lock(log.mu_);
    if (generation != log.generation_.load()) return;
    auto it = std::find(log.held_.begin(), log.held_.end(), chunk);
    if (it == log.held_.end()) return;
    log.held_.erase(it);
    log.hand_over_(chunk);
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
  dropped_ = 0;
  generation_.fetch_add(1);
  taking_ = true;
}

std::vector<uint8_t*> TimedCallLog::Stop() {
  std::lock_guard<std::mutex> lock(mu_);
  taking_ = false;
  generation_.fetch_add(1);
  std::vector<uint8_t*> held;
  held.swap(held_);
  return held;
}

void TimedCallLog::AbandonAfterFork() {
  new (&mu_) std::mutex();
  held_.clear();  // the parent's chunks: never handed over or released here
  taking_ = false;
  generation_.fetch_add(1);
}

bool TimedCallLog::Replace(ThreadChunk& t, uint64_t generation) {
  std::lock_guard<std::mutex> lock(mu_);
  if (generation_.load() != generation || !taking_.load()) return false;
  if (t.chunk != nullptr && t.generation == generation) {
    held_.erase(std::find(held_.begin(), held_.end(), t.chunk));
    hand_over_(t.chunk);
  }
  t.chunk = capacity_ > 0 ? pool_->Acquire() : nullptr;
  t.generation = generation;
  if (t.chunk == nullptr) return false;
  new (t.chunk) std::atomic<uint32_t>(0);
  held_.push_back(t.chunk);
  return true;
}

void TimedCallLog::Append(const TimedCall& call) {
  static thread_local ThreadChunk t;
  if (!taking_.load(std::memory_order_acquire)) return;
  const uint64_t generation = generation_.load(std::memory_order_acquire);
  if (t.chunk == nullptr || t.generation != generation ||
      SizeOf(t.chunk).load(std::memory_order_relaxed) == capacity_) {
    if (!Replace(t, generation)) {
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
