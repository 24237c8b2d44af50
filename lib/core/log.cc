#include "core/log.h"

#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"

namespace gpuidle::internal {

void WriteStderrLine(absl::string_view prefix, absl::string_view message) {
  // One write(2): the line stays whole among the program's own output, and no stdio state is
  // needed (this also runs from exit handlers).
  const std::string line = absl::StrCat(prefix, message, "\n");
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = write(STDERR_FILENO, line.data() + done, line.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

void Warn(absl::string_view message) { WriteStderrLine("gpuidle: warning: ", message); }
void Note(absl::string_view message) { WriteStderrLine("gpuidle: ", message); }

}  // namespace gpuidle::internal
