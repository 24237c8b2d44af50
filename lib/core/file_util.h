// Output files that are never left half-written: write a temporary file next to the target,
// then rename it over the target. A failure leaves any existing file untouched.
#ifndef GPUIDLE_LIB_CORE_FILE_UTIL_H_
#define GPUIDLE_LIB_CORE_FILE_UTIL_H_

#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gpuidle::internal {

absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents);

// Writes contents to a new temporary file in the directory of path (created exclusively, never
// through a link) and syncs it to disk. Returns the temporary file's name; the caller renames or
// links it into place and removes it. On failure nothing is left behind; the error names path.
absl::StatusOr<std::string> WriteTemporaryFileNextTo(const std::string& path,
                                                     absl::string_view contents);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_CORE_FILE_UTIL_H_
