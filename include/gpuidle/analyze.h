// Offline analysis of trace files: PyTorch profiler (Kineto) traces and gpuidle traces.
//
//   absl::StatusOr<gpuidle::Report> report =
//       gpuidle::AnalyzeTraceFiles({"rank0.json.gz", "rank1.json.gz"});
//   if (!report.ok()) { std::cerr << report.status() << "\n"; return 1; }
//   std::cout << *gpuidle::FormatReport(*report, "text");
//   gpuidle::SaveReport(*report, "report.json");
#ifndef GPUIDLE_INCLUDE_GPUIDLE_ANALYZE_H_
#define GPUIDLE_INCLUDE_GPUIDLE_ANALYZE_H_

#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gpuidle/export.h"
#include "gpuidle/options.h"
#include "gpuidle/report.h"

namespace gpuidle {

// Reads and analyses the traces of one job: one file per process (rank). Plain or gzip JSON.
// Errors name the file and the problem (missing, not a trace, truncated, wrong field type).
GPUIDLE_EXPORT absl::StatusOr<Report> AnalyzeTraceFiles(const std::vector<std::string>& paths,
                                         const AnalysisOptions& options = {});

// The report as "text" (the terminal summary) or "json" (schema gpuidle.report/1).
GPUIDLE_EXPORT absl::StatusOr<std::string> FormatReport(const Report& report, absl::string_view format,
                                         const AnalysisOptions& options = {});

// Writes the report to path atomically (a failure leaves an existing file untouched). An
// empty format is taken from the extension: ".json" is JSON, anything else text.
GPUIDLE_EXPORT absl::Status SaveReport(const Report& report, const std::string& path,
                        absl::string_view format = {}, const AnalysisOptions& options = {});

}  // namespace gpuidle

#endif  // GPUIDLE_INCLUDE_GPUIDLE_ANALYZE_H_
