// The public before-and-after API (gpuidle/analyze.h): two runs' files -> two reports -> the
// diff -> its formats.
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "analysis/report_diff.h"
#include "core/output_file.h"
#include "core/status_macros.h"
#include "gpuidle/analyze.h"
#include "report/diff_writer.h"
#include "report/writer.h"

namespace gpuidle {

ReportDiff DiffReports(const Report& before, const Report& after) {
  return internal::DiffReports(before, after);
}

absl::StatusOr<ReportDiff> DiffReportFiles(const std::vector<std::string>& before,
                                           const std::vector<std::string>& after,
                                           const AnalysisOptions& options) {
  // The side an error belongs to, in its message; the code stays AnalyzeTraceFiles'.
  const auto side = [&](const std::vector<std::string>& paths,
                        absl::string_view name) -> absl::StatusOr<Report> {
    if (paths.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("no trace or report given for ", name));
    }
    absl::StatusOr<Report> r = AnalyzeTraceFiles(paths, options);
    if (!r.ok()) {
      return absl::Status(r.status().code(), absl::StrCat(name, ": ", r.status().message()));
    }
    return r;
  };
  GPUIDLE_ASSIGN_OR_RETURN(Report b, side(before, "before"));
  GPUIDLE_ASSIGN_OR_RETURN(Report a, side(after, "after"));
  try {
    return internal::DiffReports(b, a);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("out of memory while comparing the reports");
  } catch (const std::length_error&) {
    return absl::ResourceExhaustedError("out of memory while comparing the reports");
  }
}

absl::StatusOr<std::string> FormatDiff(const ReportDiff& diff, absl::string_view format) {
  try {
    return internal::WriteDiff(diff, format);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("out of memory while formatting the diff");
  } catch (const std::length_error&) {
    return absl::ResourceExhaustedError("out of memory while formatting the diff");
  }
}

absl::Status SaveDiff(const ReportDiff& diff, const std::string& path, const SaveOptions& save) {
  const std::string format = save.format.empty() ? internal::FormatForPath(path) : save.format;
  GPUIDLE_ASSIGN_OR_RETURN(std::string text, FormatDiff(diff, format));
  internal::OutputFileOptions output;
  output.if_exists = save.overwrite ? internal::IfExists::kReplace : internal::IfExists::kFail;
  output.inputs = diff.before.inputs;
  output.inputs.insert(output.inputs.end(), diff.after.inputs.begin(), diff.after.inputs.end());
  return internal::WriteOutputFile(path, text, output).status();
}

}  // namespace gpuidle
