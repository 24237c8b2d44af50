// The offline API's internal entry points (api/analyze.cc): gpuidle::AnalyzeTraceFiles
// with a progress callback, and the text summary for a stream that may be a terminal.
#ifndef GPUIDLE_LIB_API_ANALYZE_H_
#define GPUIDLE_LIB_API_ANALYZE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gpuidle/options.h"
#include "gpuidle/report.h"

namespace gpuidle::internal {

// Called as the inputs are read, in the calling thread: input file_index (of the paths) has been
// read up to file_bytes bytes of the file (compressed bytes for gzip). A few times per MiB at
// most, never per event; and once more at the end of each file.
using FileProgress = std::function<void(size_t file_index, uint64_t file_bytes)>;

// gpuidle::AnalyzeTraceFiles, telling progress (an empty function: none). Once `cancel` (if
// given) is set, the reading stops within a fraction of a second and the call returns Cancelled:
// a caller that gave up (Ctrl-C in Python) does not leave a core busy for nothing.
absl::StatusOr<Report> AnalyzeTraceFilesWithProgress(const std::vector<std::string>& paths,
                                                     const AnalysisOptions& options,
                                                     const FileProgress& progress,
                                                     const std::atomic<bool>* cancel = nullptr);

// The text summary for a stream: coloured if color (the caller decides: core/terminal.h).
// ResourceExhausted instead of an exception when memory runs out.
absl::StatusOr<std::string> FormatText(const Report& report, bool color);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_API_ANALYZE_H_
