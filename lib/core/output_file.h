// The one way gpuidle writes a file: reports in every format, traces, `gpuidle analyze --out`,
// SaveReport, Report.save and the live outputs of a profiled program (docs/RELIABILITY.md,
// "Output files").
//
// - A file is written completely or not at all: a temporary file next to the target (created
//   exclusively, never through a link) is written, synced, then put into place.
// - Nothing is replaced unless the caller asks for it, and then only a regular file that the
//   user may write: never a symbolic link, a directory, a device, a FIFO or a socket, never a
//   read-only file (root included), never one of the inputs.
// - Links are never followed, dangling ones included: a link is a file that exists.
// - A name ending in ".gz" is written gzip-compressed.
//
//   OutputFileOptions live{.if_exists = IfExists::kUseAnotherName, .pid = id.pid};
//   GPUIDLE_ASSIGN_OR_RETURN(std::string written, WriteOutputFile(path, text, live));
//   // written is "gpuidle.0.json", or "gpuidle.0.<pid>.json" if that existed already.
#ifndef GPUIDLE_LIB_CORE_OUTPUT_FILE_H_
#define GPUIDLE_LIB_CORE_OUTPUT_FILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpuidle::internal {

// What to do when something exists at the target path.
enum class IfExists {
  kFail,            // AlreadyExists, naming the file (and how_to_replace)
  kUseAnotherName,  // the next free AlternativeOutputPath: live outputs, which nobody can ask
  kReplace,         // replace it if it is a regular file gpuidle may replace (see above)
};

struct OutputFileOptions {
  IfExists if_exists = IfExists::kFail;
  int64_t pid = 0;                  // names the alternatives of kUseAnotherName
  std::vector<std::string> inputs;  // files never written over, whatever if_exists says
  // kReplace replaces only a file of the effective user (files gpuidle keeps rewriting).
  bool replace_only_own_files = false;
};

// True for kFail's AlreadyExists when kReplace would have replaced the file (a regular file,
// not an input): the front ends then say how to ask for it ("--overwrite replaces it").
bool ReplaceableIfAsked(const absl::Status& status);

// Writes contents to path by the rules above; returns the path written. Errors name the path
// and the reason (missing directory, no permission, exists, a link, not a regular file, an
// input, read-only); no temporary file is left behind, and what was at path is untouched.
// Anything at path makes kFail AlreadyExists.
absl::StatusOr<std::string> WriteOutputFile(const std::string& path, absl::string_view contents,
                                            const OutputFileOptions& options);

// Receives a file's contents piece by piece (WriteOutputFileStreamed).
class OutputStream {
 public:
  virtual ~OutputStream() = default;
  // Appends piece; an error ends the writing, and the producer returns it.
  virtual absl::Status Write(absl::string_view piece) = 0;
};

// WriteOutputFile with contents that `produce` writes in pieces (compressed as they come for a
// ".gz" name), so that a large output, a trace of millions of events, is never held whole in
// memory. An error that `produce` returns is returned, and nothing is left behind.
absl::StatusOr<std::string> WriteOutputFileStreamed(
    const std::string& path, absl::FunctionRef<absl::Status(OutputStream&)> produce,
    const OutputFileOptions& options);

// contents as a gzip member (what WriteOutputFile writes for a ".gz" name).
absl::StatusOr<std::string> GzipCompress(absl::string_view contents);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_CORE_OUTPUT_FILE_H_
