// The public helpers around SaveReport that bindings need to speak in their own terms.
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/output_file.h"
#include "gpuidle/analyze.h"
#include "report/writer.h"

namespace gpuidle {

std::string ReportFormatForPath(absl::string_view path) { return internal::FormatForPath(path); }

bool ReplaceableWithOverwrite(const absl::Status& status) {
  return internal::ReplaceableIfAsked(status);
}

}  // namespace gpuidle
