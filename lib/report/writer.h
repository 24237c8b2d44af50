// Report writers: one per format, one interface, chosen by name or file extension.
#ifndef GPUIDLE_LIB_REPORT_WRITER_H_
#define GPUIDLE_LIB_REPORT_WRITER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gpuidle/options.h"
#include "gpuidle/report.h"
#include "model/report_formats.h"  // FormatForPath, for the writers' callers

namespace gpuidle::internal {

class ReportWriter {
 public:
  virtual ~ReportWriter() = default;
  // The thresholds printed are the report's own (Report::options).
  virtual std::string Write(const Report& report) const = 0;
};

// How the text summary is drawn. Whether a stream gets colour is decided by the caller
// (core/terminal.h, UseColor), never by the writer.
struct TextOptions {
  bool color = false;  // ANSI colours for the headline and the causes; the text is the same
};
std::unique_ptr<ReportWriter> MakeTextWriter(const TextOptions& options = {});
std::unique_ptr<ReportWriter> MakeJsonWriter();
std::unique_ptr<ReportWriter> MakeHtmlWriter();  // one self-contained page (docs/HTML_REPORT.md)

// A format of model/report_formats.h (which also has FormatForPath); InvalidArgument names the
// formats there are.
absl::StatusOr<std::unique_ptr<ReportWriter>> WriterForFormat(absl::string_view format);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_REPORT_WRITER_H_
