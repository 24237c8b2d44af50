// Files gpuidle keeps rewriting while a program runs: the metrics textfile that node_exporter's
// textfile collector reads, the periodic summary. Unlike the report outputs, which are never
// replaced (core/output_file.h), each write replaces the previous one; a reader sees the old
// contents or the new ones, never a part.
//
//   GPUIDLE_RETURN_IF_ERROR(WriteFileAtomically("/var/lib/node_exporter/gpuidle.prom", text));
#ifndef GPUIDLE_LIB_CORE_ATOMIC_FILE_H_
#define GPUIDLE_LIB_CORE_ATOMIC_FILE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace gpuidle::internal {

// Writes text to a new temporary file in path's directory (".<name>.tmp.<random>", created
// exclusively, never through a link: no *.prom name, so the textfile collector skips it),
// syncs it and renames it over path. Replaces only a regular file of the effective user that
// the user may write; anything else at path (a symbolic link, dangling or not, a directory, a
// FIFO, a device, a socket, another user's file) is refused with FailedPrecondition and left
// as it is. A missing directory is NotFound. No temporary file is left behind on failure.
absl::Status WriteFileAtomically(const std::string& path, absl::string_view text);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_CORE_ATOMIC_FILE_H_
