#include "collect/lost_records.h"

#include <new>

namespace gpuidle::internal {

void LostRecordTracker::Start(int64_t started_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  started_ns_ = started_ns;
  last_completion_ns_.clear();
  log_.Take();
  noting_ = true;
}

void LostRecordTracker::NoteCompletion(uintptr_t context, uint32_t stream, int64_t now_ns,
                                       uint64_t dropped) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!noting_) return;
  const auto queue = std::make_pair(context, stream);
  auto it = last_completion_ns_.find(queue);
  const int64_t since = it != last_completion_ns_.end() ? it->second : started_ns_;
  if (dropped > 0) log_.Add(since, now_ns, dropped);
  if (it != last_completion_ns_.end()) {
    it->second = now_ns;
  } else if (last_completion_ns_.size() < kMaxQueues) {
    last_completion_ns_.emplace(queue, now_ns);
  }
}

void LostRecordTracker::AddUntil(int64_t from_ns, int64_t now_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  log_.Add(from_ns, now_ns, 0);
}

void LostRecordTracker::Cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  noting_ = false;
  log_.Take();
}

std::vector<LostRecordSpan> LostRecordTracker::Finish() {
  std::lock_guard<std::mutex> lock(mu_);
  noting_ = false;
  last_ = log_.Take();
  return last_;
}

std::vector<LostRecordSpan> LostRecordTracker::last() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_;
}

int64_t LostRecordTracker::started_ns() const {
  std::lock_guard<std::mutex> lock(mu_);
  return started_ns_;
}

void LostRecordTracker::AbandonAfterFork() {
  new (&mu_) std::mutex();
  noting_ = false;
}

}  // namespace gpuidle::internal
