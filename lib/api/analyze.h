// The offline API's internal entry points (api/analyze.cc): gpuidle::AnalyzeTraceFiles
// with a progress callback, directories of torch.profiler traces as inputs, the gpuidle traces
// of an offline analysis (`gpuidle analyze --trace`), and the text summary for a stream that may
// be a terminal.
#ifndef GPUIDLE_LIB_API_ANALYZE_H_
#define GPUIDLE_LIB_API_ANALYZE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gpuidle/options.h"
#include "gpuidle/report.h"
#include "model/gap_list.h"
#include "model/timeline.h"

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

// The inputs with each directory among them replaced by the torch.profiler traces in it
// (ingest/read_trace.h FindProfilerTraces: the newest trace of each worker, in the order of the
// worker names). AnalyzeTraceFilesWithProgress, and so gpuidle::AnalyzeTraceFiles, take
// directories through it; the CLI calls it first to say what it took.
struct ExpandedInputs {
  std::vector<std::string> paths;
  // One line per directory, what was taken and skipped: "runs/: took the newest trace of each
  // of 2 workers: a.1.pt.trace.json, b.1.pt.trace.json; skipped 1 older: a.0.pt.trace.json".
  std::vector<std::string> notes;
};
absl::StatusOr<ExpandedInputs> ExpandTraceDirectories(const std::vector<std::string>& paths);

// Trace files analysed for a gpuidle trace of each (`gpuidle analyze --trace`): the report, as
// AnalyzeTraceFilesWithProgress gives it, and the timelines it was made from.
struct AnalyzedTimelines {
  Report report;
  std::vector<Timeline> timelines;  // one per input, in input order
  // For one input: the gaps the trace draws, from the pass that made the report
  // (analysis/analyze.h AnalyzeWithGaps). Several inputs' are listed as each trace is written,
  // so that memory never holds every rank's list.
  std::optional<GapList> gaps;
};
// Errors as AnalyzeTraceFilesWithProgress's; a gpuidle JSON report among the inputs is
// InvalidArgument, naming it: it holds no timeline to draw.
absl::StatusOr<AnalyzedTimelines> AnalyzeTraceFilesForTraces(
    const std::vector<std::string>& paths, const AnalysisOptions& options,
    const FileProgress& progress, const std::atomic<bool>* cancel = nullptr);

// Where SaveGpuidleTraces writes the traces of `inputs` inputs: `path` for one; for several, one
// per input, path with the input's position (from 0) before its extension
// (core/output_path.h TaggedOutputPath: "t.json" -> "t.0.json", "t.1.json"; "t.json.gz" ->
// "t.0.json.gz").
std::vector<std::string> GpuidleTracePaths(const std::string& path, size_t inputs);

// Writes the gpuidle trace of each timeline (report/trace_writer.h: the timeline, and every gap
// drawn by its cause) to GpuidleTracePaths(path, ...), by the output rules (core/output_file.h):
// an existing file is replaced only with save.overwrite, an input (report.inputs) never. Tells
// `written` each path written; stops at the first error, which names the file.
absl::Status SaveGpuidleTraces(const AnalyzedTimelines& analyzed, const std::string& path,
                               const SaveOptions& save,
                               const std::function<void(const std::string&)>& written);

// The text summary for a stream: coloured if color (the caller decides: core/terminal.h).
// ResourceExhausted instead of an exception when memory runs out.
absl::StatusOr<std::string> FormatText(const Report& report, bool color);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_API_ANALYZE_H_
