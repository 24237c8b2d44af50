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
};

// Sets HostCall::stream and peer_stream of the calls with the records' correlation ids.
void AttachCallStreams(const std::vector<CallStreams>& records, Timeline* timeline);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_MODEL_CALL_STREAMS_H_
