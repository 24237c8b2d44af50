// CUPTI activity records -> the timeline model. The only code that names versioned CUPTI
// record structs (CUpti_ActivityKernel10 ... on CUDA 13.0); everything after it sees the model.
//
// Records arrive in buffers, in no particular order (CUPTI fills one buffer per context and
// stream); the translator makes no ordering assumption: it appends, and Finish() joins and sorts
// (the second pass).
#ifndef GPUIDLE_LIB_COLLECT_RECORD_TRANSLATION_H_
#define GPUIDLE_LIB_COLLECT_RECORD_TRANSLATION_H_

#include <cupti.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "collect/cupti_api.h"
#include "collect/timed_calls.h"
#include "model/call_streams.h"
#include "model/timeline.h"

namespace gpuidle::internal {

// The activity kinds gpuidle enables, in the order they are enabled.
inline constexpr CUpti_ActivityKind kCollectedKinds[] = {
    CUPTI_ACTIVITY_KIND_DEVICE,     CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,     CUPTI_ACTIVITY_KIND_MEMCPY2,
    CUPTI_ACTIVITY_KIND_MEMSET,     CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
    CUPTI_ACTIVITY_KIND_CUDA_EVENT,
};

class RecordTranslator {
 public:
  // api names runtime/driver callback ids (GetCallbackName); nothing else is called.
  explicit RecordTranslator(const CuptiApi& api) : api_(api) {}

  // Translates every record of a completed buffer. Returns the number of records read.
  uint64_t TranslateBuffer(uint8_t* buffer, size_t valid_bytes);
  void Translate(const CUpti_Activity& record);
  // Calls gpuidle timed itself (collect/timed_calls.h); each counts as a record.
  void TranslateCalls(absl::Span<const TimedCall> calls);

  uint64_t records() const { return records_; }

  // The second pass: joins sync and event records to their calls, sorts. The translator is
  // empty afterwards.
  Timeline Finish();

 private:
  // Appends an op with the common fields to its device's timeline; nullptr (and counted) if
  // its timestamps are unusable.
  DeviceOp* AddDeviceOp(uint32_t device, uint64_t start, uint64_t end, uint32_t correlation,
                        uint32_t stream, OpKind kind);
  struct KernelInfo {
    StringId name;       // demangled
    bool communication;  // NCCL and the like
  };
  const KernelInfo& Kernel(const char* raw);
  StringId CopyName(uint8_t copy_kind, uint8_t src_kind, uint8_t dst_kind);
  StringId ApiName(bool driver, CUpti_CallbackId cbid, CallCategory* category);
  // A runtime or driver API call, from CUPTI's record or gpuidle's own timing.
  void AddCall(bool driver, CUpti_CallbackId cbid, uint64_t start, uint64_t end,
               uint32_t correlation, uint32_t thread);
  bool ValidTimes(uint64_t start, uint64_t end);

  struct EventRecord {
    uint32_t event_id;
    uint32_t stream;
    uint64_t correlation;
  };
  struct WaitRecord {
    uint32_t event_id;
    uint64_t correlation;
  };
  struct ApiInfo {
    StringId name;
    CallCategory category;
  };

  const CuptiApi& api_;
  Timeline timeline_;
  std::vector<CallStreams> call_streams_;
  std::vector<EventRecord> events_;
  std::vector<WaitRecord> waits_;
  absl::flat_hash_map<std::string, KernelInfo> kernels_;  // by raw (mangled) name
  absl::flat_hash_map<uint32_t, StringId> copy_names_;
  absl::flat_hash_map<uint64_t, ApiInfo> api_names_;  // (driver << 32 | cbid)
  uint64_t records_ = 0;
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_COLLECT_RECORD_TRANSLATION_H_
