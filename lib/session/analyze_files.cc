// The public offline API: files -> timelines -> report -> formats.
#include <memory>

#include "absl/strings/str_cat.h"
#include "analysis/analyze.h"
#include "core/file_util.h"
#include "core/status_macros.h"
#include "gpuidle/analyze.h"
#include "ingest/job_checks.h"
#include "ingest/read_trace.h"
#include "report/writer.h"

namespace gpuidle {

absl::StatusOr<Report> AnalyzeTraceFiles(const std::vector<std::string>& paths,
                                         const AnalysisOptions& options) {
  GPUIDLE_RETURN_IF_ERROR(internal::ValidateOptions(options));
  if (paths.empty()) return absl::InvalidArgumentError("no trace file given");
  std::vector<internal::Timeline> timelines;
  timelines.reserve(paths.size());
  for (const std::string& path : paths) {
    GPUIDLE_ASSIGN_OR_RETURN(internal::Timeline t, internal::ReadTraceFile(path));
    if (!t.HasActivity()) {
      // Everything may have been skipped as unusable: then the warnings say why.
      std::string why;
      for (const std::string& w : t.info.warnings) absl::StrAppend(&why, "; ", w);
      return absl::FailedPreconditionError(
          absl::StrCat(path,
                       ": the trace holds no host or GPU activity (was the profiler "
                       "active? CPU and CUDA activities recorded?)",
                       why));
    }
    timelines.push_back(std::move(t));
  }
  // Job-level warnings (duplicate or missing ranks, traces that do not overlap) go with the
  // first input's.
  internal::AddJobWarnings(timelines, paths);
  std::vector<const internal::Timeline*> ranks;
  for (const internal::Timeline& t : timelines) ranks.push_back(&t);
  GPUIDLE_ASSIGN_OR_RETURN(Report report, internal::AnalyzeRanks(ranks, options));
  report.inputs = paths;
  return report;
}

absl::StatusOr<std::string> FormatReport(const Report& report, absl::string_view format,
                                         const AnalysisOptions& options) {
  GPUIDLE_ASSIGN_OR_RETURN(std::unique_ptr<internal::ReportWriter> writer,
                           internal::WriterForFormat(format));
  return writer->Write(report, options);
}

absl::Status SaveReport(const Report& report, const std::string& path, absl::string_view format,
                        const AnalysisOptions& options) {
  const std::string chosen = format.empty() ? internal::FormatForPath(path) : std::string(format);
  GPUIDLE_ASSIGN_OR_RETURN(std::string text, FormatReport(report, chosen, options));
  return internal::WriteFileAtomically(path, text);
}

}  // namespace gpuidle
