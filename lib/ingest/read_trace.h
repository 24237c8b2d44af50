// Reads any trace file gpuidle understands into a Timeline; finds the traces torch.profiler wrote
// into a directory.
#ifndef GPUIDLE_LIB_INGEST_READ_TRACE_H_
#define GPUIDLE_LIB_INGEST_READ_TRACE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "model/timeline.h"

namespace gpuidle::internal {

// Plain or gzip-compressed JSON, recognised by content. Errors name the file and the problem.
absl::StatusOr<Timeline> ReadTraceFile(const std::string& path);

// The traces that torch.profiler's tensorboard_trace_handler wrote into a directory, as one job:
// it names each "<worker>.<time>.pt.trace.json" (".gz" added with use_gzip), where the worker
// name is the one given to the handler, by default "<host>_<pid>" (one per rank), and <time> the
// moment of writing (milliseconds or nanoseconds since the epoch, by the PyTorch release). A
// profiler whose schedule repeats writes a file per cycle: the newest of each worker is taken
// (the greatest <time>; the latest modification where a name carries none), the older ones
// skipped. Taken in the order of the worker names.
struct ProfilerTraceDirectory {
  std::vector<std::string> taken;    // paths: the directory joined with the names
  std::vector<std::string> skipped;  // names of the older traces of a worker
  std::vector<std::string> ignored;  // names of other entries (no *.pt.trace.json[.gz] file)
};
// NotFound or PermissionDenied where the directory cannot be listed; InvalidArgument, naming the
// directory and what it looked for, where it holds no trace.
absl::StatusOr<ProfilerTraceDirectory> FindProfilerTraces(const std::string& dir);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_INGEST_READ_TRACE_H_
