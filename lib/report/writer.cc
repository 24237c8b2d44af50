#include "report/writer.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace gpuidle::internal {

absl::StatusOr<std::unique_ptr<ReportWriter>> WriterForFormat(absl::string_view format) {
  if (format == "text" || format == "txt") return MakeTextWriter();
  if (format == "json") return MakeJsonWriter();
  if (format == "html") return MakeHtmlWriter();
  return absl::InvalidArgumentError(
      absl::StrCat("unknown report format \"", format, "\" (formats: text, json, html)"));
}

std::string FormatForPath(absl::string_view path) {
  if (absl::EndsWithIgnoreCase(path, ".gz")) path.remove_suffix(3);  // written compressed
  if (absl::EndsWithIgnoreCase(path, ".json")) return "json";
  if (absl::EndsWithIgnoreCase(path, ".html") || absl::EndsWithIgnoreCase(path, ".htm")) {
    return "html";
  }
  return "text";
}

}  // namespace gpuidle::internal
