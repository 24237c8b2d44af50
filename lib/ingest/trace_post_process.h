// What the Kineto reader does once the whole trace is parsed: device work only the end of the
// trace can place, the warnings, syncs and event records joined to their calls, time stamps
// moved onto baseTimeNanoseconds' clock, and the timeline sorted.
#ifndef GPUIDLE_LIB_INGEST_TRACE_POST_PROCESS_H_
#define GPUIDLE_LIB_INGEST_TRACE_POST_PROCESS_H_

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "ingest/event_mapper.h"
#include "ingest/reader_warnings.h"
#include "model/timeline.h"

namespace gpuidle::internal::kineto {

// Adds offset to every time stamp; InvalidArgument if one would leave the range of
// model/timeline.h.
absl::Status ShiftTimes(int64_t offset, Timeline* t);

// Finishes `t` after the parse; fails only if baseTimeNanoseconds moves a time out of range.
absl::Status FinishTimeline(EventMapper& mapper, const ReaderWarnings& warnings,
                            std::optional<int64_t> base_time_ns, Timeline* t);

}  // namespace gpuidle::internal::kineto

#endif  // GPUIDLE_LIB_INGEST_TRACE_POST_PROCESS_H_
