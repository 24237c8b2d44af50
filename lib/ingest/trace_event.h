// One event of a Kineto trace as the reader's SAX handler collects it, field by field, before
// the event mapping (event_mapper.h) turns it into the model.
#ifndef GPUIDLE_LIB_INGEST_TRACE_EVENT_H_
#define GPUIDLE_LIB_INGEST_TRACE_EVENT_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "ingest/trace_keys.h"
#include "model/timeline.h"

namespace gpuidle::internal::kineto {

// What was wrong with a field that the reader skipped.
enum class Problem : uint8_t {
  kNone,
  kMissing,
  kWrongType,
  kNotInteger,
  kOutOfRange,
  kNegative,
  kUnknownValue,
};

// One event's fields, reused from event to event (no allocation once warm).
struct Event {
  std::string ph, cat, name, stack;
  std::optional<int64_t> ts_ns, dur_ns;
  uint64_t pid = 0, tid = 0;
  bool has_pid = false;
  std::optional<int64_t> correlation, device, stream, bytes, wait_on_stream,
      wait_on_record_correlation;
  std::optional<RangeKind> range_kind;
  std::optional<CallCategory> call_category;
  std::optional<CopyKind> copy_kind;
  std::optional<bool> pageable, communication;
  std::optional<uint64_t> thread;  // where "tid" stands in for an id beyond 32 bits
  // PyTorch's collective args (record_param_comms, NCCL kernels); "" / nullopt: not given.
  std::optional<int64_t> external_id, in_nelems, out_nelems, seq;
  std::string collective_name, dtype, group_name;
  // A cuda_profiler_range's GPU throughput counters (its times and device not set here).
  GpuThroughputSample counters;
  bool has_counters = false;
  // Fields whose value could not be used (left unset above), and why.
  uint32_t bad = 0;
  std::array<Problem, kFieldCount> problem{};
  Field example_field = Field::kIgnored;  // the first unusable field
  std::string example;                    // and its value, for the warning

  void Clear() {
    ph.clear();
    cat.clear();
    name.clear();
    stack.clear();
    ts_ns.reset();
    dur_ns.reset();
    pid = tid = 0;
    has_pid = false;
    correlation.reset();
    device.reset();
    stream.reset();
    bytes.reset();
    wait_on_stream.reset();
    wait_on_record_correlation.reset();
    range_kind.reset();
    call_category.reset();
    copy_kind.reset();
    pageable.reset();
    communication.reset();
    thread.reset();
    external_id.reset();
    in_nelems.reset();
    out_nelems.reset();
    seq.reset();
    collective_name.clear();
    dtype.clear();
    group_name.clear();
    if (has_counters) {
      counters = GpuThroughputSample{};
      has_counters = false;
    }
    bad = 0;
    example_field = Field::kIgnored;
    example.clear();
  }
};

}  // namespace gpuidle::internal::kineto

#endif  // GPUIDLE_LIB_INGEST_TRACE_EVENT_H_
