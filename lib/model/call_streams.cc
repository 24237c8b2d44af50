#include "model/call_streams.h"

#include "absl/container/flat_hash_map.h"

namespace gpuidle::internal {

void AttachCallStreams(const std::vector<CallStreams>& records, Timeline* timeline) {
  if (records.empty()) return;
  absl::flat_hash_map<uint64_t, size_t> by_correlation;
  for (size_t i = 0; i < timeline->calls.size(); ++i) {
    if (timeline->calls[i].correlation_id != kNoCorrelation) {
      by_correlation.emplace(timeline->calls[i].correlation_id, i);
    }
  }
  for (const CallStreams& s : records) {
    auto it = by_correlation.find(s.correlation);
    if (it == by_correlation.end()) continue;
    HostCall& c = timeline->calls[it->second];
    if (s.stream) c.stream = static_cast<uint32_t>(*s.stream);
    if (s.wait_on_stream) c.peer_stream = static_cast<uint32_t>(*s.wait_on_stream);
  }
}

}  // namespace gpuidle::internal
