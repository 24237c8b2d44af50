#include "core/atomic_file.h"

#include "absl/status/statusor.h"
#include "core/output_file.h"

namespace gpuidle::internal {

absl::Status WriteFileAtomically(const std::string& path, absl::string_view text) {
  // WriteOutputFile already writes next to the target and swaps the file in only if it is the
  // one it checked; the rewritten files add the owner's check.
  OutputFileOptions options;
  options.if_exists = IfExists::kReplace;
  options.replace_only_own_files = true;
  return WriteOutputFile(path, text, options).status();
}

}  // namespace gpuidle::internal
