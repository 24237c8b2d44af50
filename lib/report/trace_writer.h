// The gpuidle trace: a recorded Timeline as a file that Perfetto UI and chrome://tracing open
// and that `gpuidle analyze` reads back to the same report (docs/TRACE_FORMAT.md).
//
//   absl::StatusOr<Report> report = Analyze(timeline, options);
//   GPUIDLE_ASSIGN_OR_RETURN(std::string written,
//                            WriteGpuidleTrace(timeline, &*report, "rank0.trace.json"));
//
// The file is Chrome-trace JSON shaped like PyTorch's Kineto traces (so the Kineto reader reads
// it) plus a top-level "gpuidle" object, format "gpuidle.trace/2". Given a report, its longest
// gaps are drawn as slices coloured by cause on a track "gpuidle: idle causes" of each device;
// readers ignore them.
#ifndef GPUIDLE_LIB_REPORT_TRACE_WRITER_H_
#define GPUIDLE_LIB_REPORT_TRACE_WRITER_H_

#include <string>

#include "absl/status/statusor.h"
#include "core/output_file.h"
#include "gpuidle/report.h"
#include "model/timeline.h"

namespace gpuidle::internal {

// The trace as JSON text. `timeline` must be finalized (Timeline::Finalize). Gaps of `report`
// (may be null) on other ranks than the timeline's are left out.
std::string FormatGpuidleTrace(const Timeline& timeline, const Report* report = nullptr);

// Writes FormatGpuidleTrace to path by the output rules (core/output_file.h); returns the path
// written.
absl::StatusOr<std::string> WriteGpuidleTrace(const Timeline& timeline, const Report* report,
                                              const std::string& path,
                                              const OutputFileOptions& output = {});

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_REPORT_TRACE_WRITER_H_
