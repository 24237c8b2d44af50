// The Kineto reader's event mapping: a finished Event (trace_event.h) becomes a DeviceOp,
// HostCall, Range or HostSample of the Timeline, or a sync or event record to join to its call
// afterwards; unusable fields cost the event or only themselves, counted in ReaderWarnings.
#ifndef GPUIDLE_LIB_INGEST_EVENT_MAPPER_H_
#define GPUIDLE_LIB_INGEST_EVENT_MAPPER_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "ingest/reader_warnings.h"
#include "ingest/trace_event.h"
#include "model/call_streams.h"
#include "model/timeline.h"

namespace gpuidle::internal::kineto {

class EventMapper {
 public:
  EventMapper(Timeline* timeline, ReaderWarnings* warnings) : t_(*timeline), w_(*warnings) {}

  // Adds what the event holds for the analysis, if anything.
  void Map(const Event& e);

  // Saturating: a gpuidle trace's own count plus those found among its events.
  void AddZeroTimestampRecords(uint64_t n);

  // After the parse: device work whose device only the end of the trace can tell
  // (cuda_profiler_range events without a device), and device names from deviceProperties.
  void Finish();

  // The streams of syncs and waits (cuda_sync) and of event records (cuda_event), for
  // AttachCallStreams.
  const std::vector<CallStreams>& syncs() const { return syncs_; }
  const std::vector<EventRecordStream>& event_records() const { return event_records_; }

 private:
  StringId InternText(absl::string_view text);
  // Stream ids of the model are 32 bits. Kineto's are small numbers; a value beyond 32 bits
  // (ROCm may write a stream's address) gets a stand-in from the top of the range down, the
  // same one for every event that names it. -1: none, as in CUPTI and Kineto.
  uint32_t StreamId(int64_t raw);
  // A stream for CallStreams (int64, negative = none), folded as StreamId folds op streams.
  int64_t StreamSlot(int64_t raw);
  void AddOp(int device, const DeviceOp& op);
  void ResolveProfilerRanges();

  Timeline& t_;
  ReaderWarnings& w_;
  std::vector<CallStreams> syncs_;
  std::vector<EventRecordStream> event_records_;
  absl::flat_hash_map<int, size_t> device_slots_;  // device -> index in t_.devices
  absl::flat_hash_map<int64_t, uint32_t> folded_streams_;
  std::vector<std::pair<uint64_t, DeviceOp>> pending_ranges_;  // (pid, op)
};

}  // namespace gpuidle::internal::kineto

#endif  // GPUIDLE_LIB_INGEST_EVENT_MAPPER_H_
