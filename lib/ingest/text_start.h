// The start of a trace file before the JSON parser sees it: text that is not UTF-8 JSON at all
// (UTF-16, UTF-32, NUL bytes) is named from its first bytes, and the bytes read to tell are
// handed back in front of the rest.
#ifndef GPUIDLE_LIB_INGEST_TEXT_START_H_
#define GPUIDLE_LIB_INGEST_TEXT_START_H_

#include <array>
#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ingest/byte_source.h"

namespace gpuidle::internal::kineto {

// Reads the rest of a compressed source, for its verdict: a corrupt gzip stream can inflate to
// garbage that the JSON parser rejects before zlib notices, and then the corruption is the
// problem to report, not the JSON. OK at once for a plain source.
absl::Status DrainCompressed(ByteSource& source);

// The first bytes of a source read ahead, then the rest, as one source.
class PrefixedSource : public ByteSource {
 public:
  PrefixedSource(ByteSource& inner, std::string prefix)
      : inner_(inner), prefix_(std::move(prefix)) {}
  absl::StatusOr<size_t> Read(char* buffer, size_t n) override;
  uint64_t file_bytes_read() const override { return inner_.file_bytes_read(); }
  bool compressed() const override { return inner_.compressed(); }

 private:
  ByteSource& inner_;
  std::string prefix_;
  size_t pos_ = 0;
};

// The first bytes of the text: enough for every byte order mark.
struct TextStart {
  std::array<unsigned char, 4> bytes{};
  size_t size = 0;
  // The byte at i, or -1 past the end.
  int at(size_t i) const { return i < size ? bytes[i] : -1; }
  std::string str() const { return std::string(reinterpret_cast<const char*>(bytes.data()), size); }
};

absl::StatusOr<TextStart> ReadTextStart(ByteSource& source);

// What the first bytes say about text that is not UTF-8 JSON: UTF-16 or UTF-32 (with a byte
// order mark, or JSON's ASCII first character next to NUL bytes), or NUL bytes (a device such
// as /dev/zero behind a pipe, a file of zeros). Empty if none of these.
std::string NotUtf8Json(const TextStart& s);

}  // namespace gpuidle::internal::kineto

#endif  // GPUIDLE_LIB_INGEST_TEXT_START_H_
