// Reads the Chrome-trace JSON that PyTorch's profiler writes (torch.profiler's
// export_chrome_trace, Kineto) into a Timeline, streaming: one pass, bounded buffers.
//
// Kept: kernels, gpu_memcpy, gpu_memset (device work); cuda_runtime / cuda_driver calls
// (joined to device work by "correlation"); cuda_sync records (streams of syncs and waits);
// cpu_op (framework ops), user_annotation (ProfilerStep#N steps, DataLoader ranges, user
// ranges), python_function (Python frames); deviceProperties and distributedInfo.
//
// gpuidle traces (docs/TRACE_FORMAT.md) are this format too, plus a top-level "gpuidle" object
// (source "gpuidle", process and completeness metadata; an unknown "format" is rejected) and
// a few args that override what event names imply (gpuidle_kind, gpuidle_category, ...).
#ifndef GPUIDLE_LIB_INGEST_KINETO_READER_H_
#define GPUIDLE_LIB_INGEST_KINETO_READER_H_

#include "absl/status/statusor.h"
#include "ingest/byte_source.h"
#include "model/timeline.h"

namespace gpuidle::internal {

// Errors are InvalidArgument (not JSON, not a trace, a field of the wrong type) or DataLoss
// (truncated or corrupt input), with a message that names the problem and where it is.
absl::StatusOr<Timeline> ReadKinetoTrace(ByteSource& source);

// The same with a chosen chunk size: tests use tiny chunks to put every token across a chunk
// boundary, where the fast scanners hand over to RapidJSON's own code.
absl::StatusOr<Timeline> ReadKinetoTrace(ByteSource& source, size_t chunk_bytes);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_INGEST_KINETO_READER_H_
