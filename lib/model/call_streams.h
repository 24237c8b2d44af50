// Streams of sync and wait calls. API records do not say which stream a cudaStreamSynchronize
// or cudaStreamWaitEvent was about; separate records do (CUPTI synchronization records, Kineto
// cuda_sync events), joined to the call by correlation id. Shared by every producer.
#ifndef GPUIDLE_LIB_MODEL_CALL_STREAMS_H_
#define GPUIDLE_LIB_MODEL_CALL_STREAMS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "model/timeline.h"

namespace gpuidle::internal {

struct CallStreams {
  uint64_t correlation = kNoCorrelation;
  std::optional<int64_t> stream;          // the stream synchronised, or made to wait
  std::optional<int64_t> wait_on_stream;  // for a wait: the stream of the awaited event
  // For a wait whose record does not name the awaited stream: the correlation id of the
  // cudaEventRecord call that recorded the event (Kineto's wait_on_cuda_event_record_corr_id).
  uint64_t event_record_correlation = kNoCorrelation;
};

// Where an event was recorded: the correlation id of its cudaEventRecord call and the stream
// (Kineto cuda_event records, CUPTI CUDA_EVENT activity).
struct EventRecordStream {
  uint64_t record_correlation = kNoCorrelation;
  int64_t stream = 0;
};

// Sets HostCall::stream and peer_stream of the calls with the records' correlation ids. The
// stream waited on comes from the record's wait_on_stream; failing that, through the
// cudaEventRecord correlation, from the event's record, from another record that names the
// stream of the same event, or from the record call itself where it carries a stream.
// Negative streams (-1: "none" in CUPTI and Kineto) are unknown.
void AttachCallStreams(const std::vector<CallStreams>& records, Timeline* timeline,
                       const std::vector<EventRecordStream>& event_records = {});

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_MODEL_CALL_STREAMS_H_
