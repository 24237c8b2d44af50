#include "model/call_streams.h"

#include "absl/container/flat_hash_map.h"
#include "model/correlation_index.h"

namespace gpuidle::internal {
namespace {

bool Known(const std::optional<int64_t>& stream) {
  return stream.has_value() && *stream >= 0 && *stream < int64_t{kNoStream};
}

}  // namespace

void AttachCallStreams(const std::vector<CallStreams>& records, Timeline* timeline,
                       const std::vector<EventRecordStream>& event_records) {
  if (records.empty()) return;
  const CorrelationIndex by_correlation(timeline->calls);
  // cudaEventRecord correlation -> the stream the event was recorded on.
  absl::flat_hash_map<uint64_t, int64_t> recorded_on;
  for (const EventRecordStream& e : event_records) {
    if (e.record_correlation != kNoCorrelation && Known(e.stream)) {
      recorded_on.emplace(e.record_correlation, e.stream);
    }
  }
  for (const CallStreams& s : records) {
    if (s.event_record_correlation != kNoCorrelation && Known(s.wait_on_stream)) {
      recorded_on.emplace(s.event_record_correlation, *s.wait_on_stream);
    }
  }
  for (const CallStreams& s : records) {
    const int32_t call = by_correlation.Find(s.correlation);
    if (call == CorrelationIndex::kNone) continue;
    HostCall& c = timeline->calls[call];
    if (Known(s.stream)) c.stream = static_cast<uint32_t>(*s.stream);
    if (Known(s.wait_on_stream)) {
      c.peer_stream = static_cast<uint32_t>(*s.wait_on_stream);
    } else if (s.event_record_correlation != kNoCorrelation) {
      auto recorded = recorded_on.find(s.event_record_correlation);
      if (recorded != recorded_on.end()) {
        c.peer_stream = static_cast<uint32_t>(recorded->second);
      } else if (const int32_t record = by_correlation.Find(s.event_record_correlation);
                 record != CorrelationIndex::kNone && timeline->calls[record].stream != kNoStream) {
        c.peer_stream = timeline->calls[record].stream;
      }
    }
  }
}

}  // namespace gpuidle::internal
