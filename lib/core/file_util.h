// Output files that are never left half-written: write a temporary file next to the target,
// then rename it over the target. A failure leaves any existing file untouched.
#ifndef GPUIDLE_LIB_CORE_FILE_UTIL_H_
#define GPUIDLE_LIB_CORE_FILE_UTIL_H_

#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/status.h"

namespace gpuidle::internal {

absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_CORE_FILE_UTIL_H_
