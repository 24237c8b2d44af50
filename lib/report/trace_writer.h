// The gpuidle trace: a recorded Timeline as a file that Perfetto UI and chrome://tracing open
// and that `gpuidle analyze` reads back to the same report (docs/TRACE_FORMAT.md).
//
//   absl::StatusOr<AnalysisWithGaps> a = AnalyzeWithGaps(timeline, options, max_gaps);
//   GPUIDLE_ASSIGN_OR_RETURN(std::string written,
//                            WriteGpuidleTrace(timeline, &a->report, &a->gaps,
//                            "rank0.trace.json"));
//
// The file is Chrome-trace JSON shaped like PyTorch's Kineto traces (so the Kineto reader reads
// it) plus a top-level "gpuidle" object, format "gpuidle.trace/2": a track per CUDA stream with
// its kernels, copies and collectives, a track per host thread with its CUDA calls and ranges,
// and an arrow from each launch to the GPU work it issued. Given a report, the gaps the analysis
// listed for it (model/gap_list.h; up to TraceOptions::max_gaps, the longest) are drawn as slices
// named and coloured by their cause on each device's track "gpuidle: idle causes"; readers
// ignore them. The writer formats only: the analysis lists the gaps.
#ifndef GPUIDLE_LIB_REPORT_TRACE_WRITER_H_
#define GPUIDLE_LIB_REPORT_TRACE_WRITER_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/output_file.h"
#include "gpuidle/report.h"
#include "model/gap_list.h"
#include "model/timeline.h"

namespace gpuidle::internal {

struct TraceOptions {
  // A long run has millions of gaps, each a slice: beyond this many, the shortest are left out
  // (and counted in the file). 200k slices are about 60 MB of JSON and still open in Perfetto.
  // The gap list is made with this many (ListGaps, AnalyzeWithGaps); without one, it caps the
  // report's own gaps drawn.
  static constexpr int kDefaultMaxGaps = 200'000;
  int max_gaps = kDefaultMaxGaps;
};

// Writes the trace to `out` in pieces of about a megabyte: memory holds one piece and the gaps
// drawn, never the file. `timeline` must be finalized (Timeline::Finalize). With a report (may
// be null), `gaps` are drawn: the gaps of the timeline analysed with the report's options
// (analysis/analyze.h ListGaps); where there is no such list (null: that analysis failed), the
// report's own longest_gaps of the timeline's rank are drawn.
absl::Status StreamGpuidleTrace(const Timeline& timeline, const Report* report, const GapList* gaps,
                                OutputStream& out, const TraceOptions& options = {});

// The trace as JSON text (tests, fuzzers, small timelines).
std::string FormatGpuidleTrace(const Timeline& timeline, const Report* report = nullptr,
                               const GapList* gaps = nullptr, const TraceOptions& options = {});

// Streams the trace to path by the output rules (core/output_file.h); returns the path written.
absl::StatusOr<std::string> WriteGpuidleTrace(const Timeline& timeline, const Report* report,
                                              const GapList* gaps, const std::string& path,
                                              const OutputFileOptions& output = {},
                                              const TraceOptions& options = {});

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_REPORT_TRACE_WRITER_H_
