#include "report/writer.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "model/report_formats.h"

namespace gpuidle::internal {

absl::StatusOr<std::unique_ptr<ReportWriter>> WriterForFormat(absl::string_view format) {
  if (!IsReportFormat(format)) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown report format \"", format, "\" (formats: ", kReportFormatList, ")"));
  }
  if (format == "json") return MakeJsonWriter();
  if (format == "html") return MakeHtmlWriter();
  return MakeTextWriter();
}

}  // namespace gpuidle::internal
