// Reads any trace file gpuidle understands into a Timeline.
#ifndef GPUIDLE_LIB_INGEST_READ_TRACE_H_
#define GPUIDLE_LIB_INGEST_READ_TRACE_H_

#include <string>

#include "absl/status/statusor.h"
#include "model/timeline.h"

namespace gpuidle::internal {

// Plain or gzip-compressed JSON, recognised by content. Errors name the file and the problem.
absl::StatusOr<Timeline> ReadTraceFile(const std::string& path);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_INGEST_READ_TRACE_H_
