// The report's formats, by name and by file extension: one list for the writers
// (report/writer.cc) and for the settings that name a format (settings/option_table.cc), which
// sit side by side above the model.
#ifndef GPUIDLE_LIB_MODEL_REPORT_FORMATS_H_
#define GPUIDLE_LIB_MODEL_REPORT_FORMATS_H_

#include <string>

#include "absl/strings/string_view.h"

namespace gpuidle::internal {

// "text" (also "txt"), "json" or "html".
bool IsReportFormat(absl::string_view name);
// The formats there are, as an error message lists them.
inline constexpr char kReportFormatList[] = "text, json, html";

// The format a path's extension asks for ("report.json", "report.json.gz" -> "json";
// "report.html", "report.htm" -> "html"), "text" otherwise.
std::string FormatForPath(absl::string_view path);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_MODEL_REPORT_FORMATS_H_
