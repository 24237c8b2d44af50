#include "model/report_formats.h"

#include "absl/strings/match.h"

namespace gpuidle::internal {

bool IsReportFormat(absl::string_view name) {
  return name == "text" || name == "txt" || name == "json" || name == "html";
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
