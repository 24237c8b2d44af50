// The host call of each correlation id: the join of device ops, sync records and call sites to
// the call that issued them.
//
// Correlation ids count up from 1 in a live capture (CUPTI's) and in PyTorch traces: where the
// largest id is at most a few times the number of calls, a vector indexed by id answers without
// hashing (a million joins: a few ms instead of tens); sparse ids go to a hash map.
#ifndef GPUIDLE_LIB_MODEL_CORRELATION_INDEX_H_
#define GPUIDLE_LIB_MODEL_CORRELATION_INDEX_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "model/timeline.h"

namespace gpuidle::internal {

class CorrelationIndex {
 public:
  static constexpr int32_t kNone = -1;

  // Indexes calls by correlation id; of several calls with one id, the first counts.
  explicit CorrelationIndex(const std::vector<HostCall>& calls) {
    uint64_t max_id = 0;
    size_t with_id = 0;
    for (const HostCall& c : calls) {
      if (c.correlation_id == kNoCorrelation) continue;
      max_id = std::max(max_id, c.correlation_id);
      ++with_id;
    }
    if (with_id == 0) return;
    dense_ = max_id <= 4 * static_cast<uint64_t>(with_id) + 4096;
    if (dense_) {
      by_id_.assign(max_id + 1, kNone);
    } else {
      sparse_.reserve(with_id);
    }
    for (size_t i = 0; i < calls.size(); ++i) {
      const uint64_t id = calls[i].correlation_id;
      if (id == kNoCorrelation) continue;
      if (dense_) {
        if (by_id_[id] == kNone) by_id_[id] = static_cast<int32_t>(i);
      } else {
        sparse_.emplace(id, static_cast<int32_t>(i));
      }
    }
  }

  // Index of the call with this correlation id, or kNone (also for kNoCorrelation).
  int32_t Find(uint64_t id) const {
    if (dense_) return id < by_id_.size() ? by_id_[id] : kNone;
    if (sparse_.empty() || id == kNoCorrelation) return kNone;
    auto it = sparse_.find(id);
    return it == sparse_.end() ? kNone : it->second;
  }

 private:
  bool dense_ = false;
  std::vector<int32_t> by_id_;  // by_id_[kNoCorrelation] stays kNone
  absl::flat_hash_map<uint64_t, int32_t> sparse_;
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_MODEL_CORRELATION_INDEX_H_
