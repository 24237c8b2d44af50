// Offline analysis of trace files: PyTorch profiler (Kineto) traces and gpuidle traces.
//
//   absl::StatusOr<gpuidle::Report> report =
//       gpuidle::AnalyzeTraceFiles({"rank0.json.gz", "rank1.json.gz"});
//   if (!report.ok()) { std::cerr << report.status() << "\n"; return 1; }
//   std::cout << *gpuidle::FormatReport(*report, "text");
//   gpuidle::SaveReport(*report, "report.json");
#ifndef GPUIDLE_INCLUDE_GPUIDLE_ANALYZE_H_
#define GPUIDLE_INCLUDE_GPUIDLE_ANALYZE_H_

#include <atomic>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gpuidle/diff.h"
#include "gpuidle/export.h"
#include "gpuidle/options.h"
#include "gpuidle/report.h"

namespace gpuidle {

// Reads and analyses the traces of one job: one file per process (rank). Plain or gzip JSON; a
// directory stands for the torch.profiler traces in it (tensorboard_trace_handler's
// "<worker>.<time>.pt.trace.json[.gz]": the newest of each worker, docs/TRACE_INPUTS.md).
// A file may also be a gpuidle JSON report (a rank's report, docs/REPORT_SCHEMA.md): reports, and
// traces given with them, are merged as the ranks of one job.
// Errors name the file and the problem (missing, not a trace, truncated, wrong field type).
GPUIDLE_EXPORT absl::StatusOr<Report> AnalyzeTraceFiles(const std::vector<std::string>& paths,
                                                        const AnalysisOptions& options = {});

// The same, for a caller that may give up (another thread sets `cancel`): the read stops within
// a fraction of a second of it and the call returns Cancelled. The analysis after the read runs
// to its end (about a second per million kernels).
GPUIDLE_EXPORT absl::StatusOr<Report> AnalyzeTraceFiles(const std::vector<std::string>& paths,
                                                        const AnalysisOptions& options,
                                                        const std::atomic<bool>& cancel);

// Merges a job's per-rank reports, each the text of a gpuidle JSON report (docs/REPORT_SCHEMA.md:
// a rank's `profile(out="r.json")`, `gpuidle analyze --format json`), as `gpuidle analyze
// report.*.json` merges their files: names[i] names json_reports[i] in errors and warnings and
// becomes one of Report::inputs. Errors: InvalidArgument (not a report, a field of the wrong
// type, names of another length, no report), ResourceExhausted (beyond the reader's limits).
GPUIDLE_EXPORT absl::StatusOr<Report> MergeReportJson(const std::vector<std::string>& json_reports,
                                                      const std::vector<std::string>& names,
                                                      const AnalysisOptions& options = {});
// The same, stopping between reports once `cancel` is set (Cancelled).
GPUIDLE_EXPORT absl::StatusOr<Report> MergeReportJson(const std::vector<std::string>& json_reports,
                                                      const std::vector<std::string>& names,
                                                      const AnalysisOptions& options,
                                                      const std::atomic<bool>& cancel);

// Merges the per-rank report files of a job (gpuidle JSON reports, plain or gzip), as
// AnalyzeTraceFiles merges them; a trace file beside reports is analysed as its rank. Inputs that
// are all traces are InvalidArgument naming them: there is no report to merge, and
// AnalyzeTraceFiles is what analyses traces (Python's gpuidle.merge_reports of files).
GPUIDLE_EXPORT absl::StatusOr<Report> MergeReportFiles(const std::vector<std::string>& paths,
                                                       const AnalysisOptions& options,
                                                       const std::atomic<bool>& cancel);

// The report as "text" (the terminal summary), "json" (schema gpuidle.report/2) or "html" (one
// self-contained page, docs/HTML_REPORT.md), with the thresholds of the analysis that made it
// (Report::options).
GPUIDLE_EXPORT absl::StatusOr<std::string> FormatReport(const Report& report,
                                                        absl::string_view format);

// Writes the report to path, completely or not at all, by gpuidle's output rules
// (docs/RELIABILITY.md): an existing file is AlreadyExists unless save.overwrite; an input of
// the report (Report::inputs) is never written over; a ".gz" name is written gzip-compressed.
GPUIDLE_EXPORT absl::Status SaveReport(const Report& report, const std::string& path,
                                       const SaveOptions& save);
// The same with SaveOptions{format}: never replaces a file.
GPUIDLE_EXPORT absl::Status SaveReport(const Report& report, const std::string& path,
                                       absl::string_view format = {});

// The format SaveReport takes from a file name when none is given: "json" for ".json" and
// ".json.gz", "html" for ".html" and ".htm", else "text".
GPUIDLE_EXPORT std::string ReportFormatForPath(absl::string_view path);

// Before and after (gpuidle/diff.h, docs/ANALYSIS.md "Before and after"): what changed between
// two runs, per cause, per step and in step time, with a verdict. DiffReports never fails:
// mismatches (other devices, no steps, other step sources, lost records) become caveats.
GPUIDLE_EXPORT ReportDiff DiffReports(const Report& before, const Report& after);
// Each side is what AnalyzeTraceFiles accepts (traces or reports; several files are the ranks of
// one job), analysed with options; errors are AnalyzeTraceFiles', naming the side.
GPUIDLE_EXPORT absl::StatusOr<ReportDiff> DiffReportFiles(const std::vector<std::string>& before,
                                                          const std::vector<std::string>& after,
                                                          const AnalysisOptions& options = {});
// The diff as "text" (the terminal summary) or "json" (schema gpuidle.diff/1).
GPUIDLE_EXPORT absl::StatusOr<std::string> FormatDiff(const ReportDiff& diff,
                                                      absl::string_view format);
// Writes the diff by SaveReport's rules (never over an input of either run; save.format empty:
// from the extension).
GPUIDLE_EXPORT absl::Status SaveDiff(const ReportDiff& diff, const std::string& path,
                                     const SaveOptions& save = {});

// Whether a SaveReport / Profiler::SaveTrace error is an existing file that
// SaveOptions::overwrite (overwrite=true) would replace, so that a caller can say how.
GPUIDLE_EXPORT bool ReplaceableWithOverwrite(const absl::Status& status);

}  // namespace gpuidle

#endif  // GPUIDLE_INCLUDE_GPUIDLE_ANALYZE_H_
