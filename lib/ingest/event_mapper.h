// The Kineto reader's event mapping: a finished Event (trace_event.h) becomes a DeviceOp,
// HostCall, Range or HostSample of the Timeline, or a sync or event record to join to its call
// afterwards; unusable fields cost the event or only themselves, counted in ReaderWarnings.
#ifndef GPUIDLE_LIB_INGEST_EVENT_MAPPER_H_
#define GPUIDLE_LIB_INGEST_EVENT_MAPPER_H_

#include <cstdint>
#include <optional>
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
  // What torch.profiler says it recorded: its own span (a complete event of category "Trace",
  // "PyTorch Profiler (0)") as [start, end) as written (before the base time); nullopt where it
  // wrote none.
  std::optional<std::pair<int64_t, int64_t>> profiler_span() const { return profiler_span_; }
  // The GPU throughput counters of the cuda_profiler_range events placed on a device, one
  // sample over each range's span, with the times as written (before the base time).
  std::vector<GpuThroughputSample> TakeRangeCounters() { return std::move(range_counters_); }

 private:
  StringId InternText(absl::string_view text);
  // Stream ids of the model are 32 bits. Kineto's are small numbers; a value beyond 32 bits
  // (ROCm may write a stream's address) gets a stand-in from the top of the range down, the
  // same one for every event that names it. -1: none, as in CUPTI and Kineto.
  uint32_t StreamId(int64_t raw);
  // A stream for CallStreams (int64, negative = none), folded as StreamId folds op streams.
  int64_t StreamSlot(int64_t raw);
  // False where the op was dropped (beyond kMaxDevicesPerTrace).
  bool AddOp(int device, const DeviceOp& op, size_t* slot = nullptr);
  // A cuda_profiler_range's op, and a sample of its counters where it has any.
  void AddRange(int device, const DeviceOp& op, const std::optional<GpuThroughputSample>& counters);
  void ResolveProfilerRanges();
  // What the event's own collective args say (the unknown fields left unknown).
  CollectiveArgs CollectiveOf(const Event& e);
  // Communication kernels get their args: their own, else (field by field) those of the
  // record_param_comms that launched them, found by "External id", else by the launching call
  // (correlation) lying inside one on the same thread.
  void ResolveCollectives();

  // A communication kernel waiting for ResolveCollectives.
  struct PendingCollective {
    size_t slot = 0;  // t_.devices[slot].ops[index]: stable until Finalize sorts
    size_t index = 0;
    int64_t external_id = 0;  // 0: none (Kineto numbers them from 1)
    uint64_t correlation = kNoCorrelation;
    CollectiveArgs own;
  };
  // A record_param_comms CPU op.
  struct ParamComms {
    uint64_t thread = 0;
    int64_t start_ns = 0;
    int64_t end_ns = 0;
    CollectiveArgs args;
  };

  Timeline& t_;
  ReaderWarnings& w_;
  std::vector<CallStreams> syncs_;
  std::vector<EventRecordStream> event_records_;
  std::optional<std::pair<int64_t, int64_t>> profiler_span_;
  absl::flat_hash_map<int, size_t> device_slots_;  // device -> index in t_.devices
  absl::flat_hash_map<int64_t, uint32_t> folded_streams_;
  struct PendingRange {
    uint64_t pid = 0;
    DeviceOp op;
    std::optional<GpuThroughputSample> counters;
  };
  std::vector<PendingRange> pending_ranges_;
  std::vector<GpuThroughputSample> range_counters_;
  std::vector<PendingCollective> pending_collectives_;
  std::vector<ParamComms> param_comms_;
  absl::flat_hash_map<int64_t, size_t> param_comms_by_external_id_;  // -> index in param_comms_
};

}  // namespace gpuidle::internal::kineto

#endif  // GPUIDLE_LIB_INGEST_EVENT_MAPPER_H_
