#include "session/outputs.h"

#include <unistd.h>

#include <cstdlib>

#include "api/analyze.h"
#include "core/output_path.h"
#include "core/terminal.h"

namespace gpuidle::internal {

bool IsPartialReport(const ProfilerOptions& o) {
  return !o.report_path.empty() && o.summary_path == TaggedOutputPath(o.report_path, "partial");
}

absl::StatusOr<std::string> StderrSummary(const Report& report, const ProfilerOptions& options) {
  const ColorWhen when = ParseColorWhen(options.color).value_or(ColorWhen::kAuto);
  return FormatText(report, UseColor(when, STDERR_FILENO));
}

std::optional<int> IntFromEnvironment(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < 0 || n > (1 << 30)) return std::nullopt;
  return static_cast<int>(n);
}

}  // namespace gpuidle::internal
