// Writers of a ReportDiff (`gpuidle diff`): the terminal summary and the JSON document, schema
// "gpuidle.diff/1" (docs/REPORT_SCHEMA.md, "Before and after: gpuidle.diff/1").
#ifndef GPUIDLE_LIB_REPORT_DIFF_WRITER_H_
#define GPUIDLE_LIB_REPORT_DIFF_WRITER_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gpuidle/diff.h"

namespace gpuidle::internal {

// At most 100 columns per line, in the style of the report's text summary.
std::string WriteDiffText(const ReportDiff& diff);
std::string WriteDiffJson(const ReportDiff& diff);

// "text" (or "txt") or "json"; InvalidArgument names the formats there are.
absl::StatusOr<std::string> WriteDiff(const ReportDiff& diff, absl::string_view format);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_REPORT_DIFF_WRITER_H_
