// Sequential bytes of a trace file, decompressed on the fly: the readers never hold the file.
#ifndef GPUIDLE_LIB_INGEST_BYTE_SOURCE_H_
#define GPUIDLE_LIB_INGEST_BYTE_SOURCE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpuidle::internal {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to n bytes; 0 means the end. An error names the problem (corrupt, truncated).
  virtual absl::StatusOr<size_t> Read(char* buffer, size_t n) = 0;
  // Compressed input consumed so far (file bytes), for progress and error messages.
  virtual uint64_t file_bytes_read() const = 0;
  // True if the bytes are inflated from the file: corruption may then surface only later.
  virtual bool compressed() const { return false; }
};

// Opens a regular file or a pipe (`<(zcat x)`); gzip is recognised by its magic bytes, not by
// the name. Errors: NotFound (missing), PermissionDenied, InvalidArgument (a directory, a
// device such as /dev/zero or a terminal, an empty file, another compression: bzip2, xz,
// zstd, zip, lz4, which gpuidle does not read).
absl::StatusOr<std::unique_ptr<ByteSource>> OpenByteSource(const std::string& path);

// For a regular file whose name ends in ".gz" (any case) but whose first bytes are no gzip
// header: what the user needs to hear, "x.json.gz is not gzip data (it starts like JSON; rename
// it to x.json)" or "... (it starts with "<!DOC")". Empty for gzip data, for another compression
// (OpenByteSource names it), for an empty or unreadable file, for another name, and for anything
// but a regular file (a pipe is never read twice). Reads a few bytes of the file.
std::string NotGzipNote(const std::string& path);

// The same over bytes in memory (which must outlive the source): gzip is inflated, other
// compressions are refused, as for files. For tests and fuzzing.
absl::StatusOr<std::unique_ptr<ByteSource>> OpenMemoryByteSource(absl::string_view bytes);

// Reads (and inflates) `inner` on a worker thread, a few chunks ahead of the consumer, so that
// file reading and decompression overlap parsing. The bytes, the end and any error arrive
// exactly as `inner` gives them. Falls back to reading in the caller's thread if no thread
// can be started.
std::unique_ptr<ByteSource> ReadAhead(std::unique_ptr<ByteSource> inner,
                                      size_t chunk_bytes = size_t{1} << 20);

// Told how far into its file a source has read (ByteSource::file_bytes_read); returns false to
// stop the read (the caller gave up on it).
using ReadProgress = std::function<bool(uint64_t file_bytes)>;

// `inner` telling `progress` in the reading thread each time it has read on by kProgressStep
// bytes of the file or more, and at its end: a comparison per Read, no call per event. Once
// progress returns false, reads fail with Cancelled.
inline constexpr uint64_t kProgressStep = uint64_t{1} << 18;
std::unique_ptr<ByteSource> WithProgress(std::unique_ptr<ByteSource> inner, ReadProgress progress);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_INGEST_BYTE_SOURCE_H_
