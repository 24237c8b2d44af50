// Reads Chrome-trace JSON from PyTorch's profiler (torch.profiler's export_chrome_trace,
// Kineto) and gpuidle's own traces into a Timeline, streaming: one pass, bounded buffers.
// docs/TRACE_INPUTS.md lists the accepted generations; in short:
//
// Kept, by category (matched in any case; PyTorch 1.8's spellings in parentheses):
//   - kernel (Kernel), gpu_memcpy (Memcpy), gpu_memset (Memset), cuda_profiler_range: device
//     work, on the device its "device" arg or its pid names, listed in deviceProperties or not;
//   - cuda_runtime (Runtime), cuda_driver (Driver): CUDA and HIP calls, joined to device work
//     by "correlation" and categorised by name (lib/model/cuda_api.cc);
//   - cuda_sync, cuda_event: the streams of syncs and stream waits, joined to their calls;
//   - cpu_op (Operator), user_annotation, python_function (Python): host ranges. Steps
//     (ProfilerStep#N) and DataLoader waits are found by name in all three
//     (trace_names.h: RangeKindFromName);
//   - deviceProperties, distributedInfo, baseTimeNanoseconds; the bare-array format too.
// Integers may be numbers or strings, decimal or "0x" hex (ROCm writes "bytes": "9216").
//
// An event field that cannot be used (wrong type, not a number, out of range, unknown value)
// is not an error: the event is skipped when it needs the field (ts, dur), or read without it,
// and Timeline::info.warnings gets one line per kind of problem with the count. Errors are
// what leaves no trace to read: not JSON, truncated, no "traceEvents" array.
//
// gpuidle traces (docs/TRACE_FORMAT.md) are this format too, plus a top-level "gpuidle" object
// (source "gpuidle", process and completeness metadata; an unknown "format", or a key of the
// wrong type, is an error), host stack samples (gpuidle_host_sample instants) and a few args
// that override what event names imply (gpuidle_kind, gpuidle_category, ...).
//
// Bounded on any input (docs/TRACE_INPUTS.md, "Limits"): memory and time grow with what is
// kept, never with one token, and the timeline keeps the time invariants of model/timeline.h.
#ifndef GPUIDLE_LIB_INGEST_KINETO_READER_H_
#define GPUIDLE_LIB_INGEST_KINETO_READER_H_

#include <cstddef>

#include "absl/status/statusor.h"
#include "ingest/byte_source.h"
#include "model/timeline.h"

namespace gpuidle::internal {

// Kept strings (event names, stacks, device names, the host) longer than this are cut (at a
// UTF-8 boundary, ending in "...") with one warning that counts them. Demangled C++ kernel
// names reach several KB; 64 KiB leaves room for any real one. A longer string of any length
// costs no more memory than this.
inline constexpr size_t kMaxKeptStringBytes = 64 * 1024;
// A JSON number longer than this is an error: no trace writes one, and RapidJSON's parser
// would copy it whole.
inline constexpr size_t kMaxNumberBytes = 1 << 20;
// JSON nested deeper than this is an error (a trace nests a few levels).
inline constexpr int kMaxJsonDepth = 512;
// Device work on more distinct devices than this is skipped, with one warning; so are
// deviceProperties entries beyond this many.
inline constexpr size_t kMaxDevicesPerTrace = 1024;

// Errors are InvalidArgument (not JSON, not a trace, malformed gpuidle metadata), DataLoss
// (truncated or corrupt input) or ResourceExhausted (out of memory), with a message that names
// the problem and where it is; values quoted from the input are short (QuoteForMessage).
absl::StatusOr<Timeline> ReadKinetoTrace(ByteSource& source);

// The same with a chosen chunk size: tests use tiny chunks to put every token across a chunk
// boundary, where the fast scanners hand over to RapidJSON's own code.
absl::StatusOr<Timeline> ReadKinetoTrace(ByteSource& source, size_t chunk_bytes);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_INGEST_KINETO_READER_H_
