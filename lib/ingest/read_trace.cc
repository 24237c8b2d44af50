#include "ingest/read_trace.h"

#include "absl/strings/str_cat.h"
#include "core/out_of_memory.h"
#include "core/status_macros.h"
#include "ingest/byte_source.h"
#include "ingest/kineto_reader.h"

namespace gpuidle::internal {
namespace {

absl::StatusOr<Timeline> ReadTraceFileOrThrow(const std::string& path) {
  GPUIDLE_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, OpenByteSource(path));
  // Reading and inflating overlap parsing on a second thread.
  absl::StatusOr<Timeline> timeline = ReadKinetoTrace(*ReadAhead(std::move(source)));
  // The reader does not know the path; its messages never name it (a message that merely
  // starts like the path, e.g. "not JSON" for a file called "n", still needs it).
  if (!timeline.ok()) {
    return absl::Status(timeline.status().code(),
                        absl::StrCat(path, ": ", timeline.status().message()));
  }
  return timeline;
}

}  // namespace

absl::StatusOr<Timeline> ReadTraceFile(const std::string& path) {
  // The reader turns running out of memory into an error; opening the file and starting the
  // read-ahead allocate too.
  return OutOfMemoryIsAnErrorWith(
      [&] { return ReadTraceFileOrThrow(path); },
      [&] { return absl::StrCat(path, ": out of memory while reading the trace"); });
}

}  // namespace gpuidle::internal
