// libFuzzer harness (b): the reader through the file path's byte sources: format sniffing
// (gzip, the compressions gpuidle refuses), zlib inflation, concatenated gzip members, and the
// read-ahead thread, all over the input in memory.
//
// The input is read as a file's bytes would be. Input that is not gzip is also compressed here
// (in one member, or split in two) and read again: inflating must change nothing.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "fuzz_support.h"
#include "ingest/byte_source.h"
#include "ingest/kineto_reader.h"
#include "report/trace_writer.h"

namespace {

std::string Outcome(absl::string_view file_bytes, size_t read_ahead_chunk) {
  absl::StatusOr<std::unique_ptr<gpuidle::internal::ByteSource>> source =
      gpuidle::internal::OpenMemoryByteSource(file_bytes);
  if (!source.ok()) {
    gpuidle::fuzz::CheckMessage(source.status().message());
    return source.status().ToString();
  }
  std::unique_ptr<gpuidle::internal::ByteSource> ahead =
      gpuidle::internal::ReadAhead(std::move(*source), read_ahead_chunk);
  absl::StatusOr<gpuidle::internal::Timeline> t = gpuidle::internal::ReadKinetoTrace(*ahead);
  if (!t.ok()) {
    gpuidle::fuzz::CheckMessage(t.status().message());
    return t.status().ToString();
  }
  gpuidle::fuzz::CheckTimeline(*t);
  return gpuidle::internal::FormatGpuidleTrace(*t);
}

// A gzip member of the bytes.
std::string Gzip(absl::string_view bytes) {
  z_stream z{};
  if (deflateInit2(&z, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    gpuidle::fuzz::Fail("deflateInit2");
  }
  std::string out(deflateBound(&z, static_cast<uLong>(bytes.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) gpuidle::fuzz::Fail("deflate");
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  const std::string as_file = Outcome(bytes, 1 + size % 5000);
  const bool is_gzip = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  if (is_gzip || size == 0) return 0;
  // The same bytes compressed: one member, or two members split inside the text.
  const std::string one = Outcome(Gzip(bytes), 4096);
  const size_t cut = size / 2;
  const std::string two = Outcome(Gzip(bytes.substr(0, cut)) + Gzip(bytes.substr(cut)), 1 << 20);
  // The plain read refuses what looks like another compression (bytes the JSON reader never
  // sees); inflated, those bytes are JSON text to parse. Compare only what both read as text.
  if (as_file.find("is compressed with") == std::string::npos) {
    GPUIDLE_FUZZ_CHECK(one == as_file, "\n--- gzip:\n" + one.substr(0, 500) + "\n--- plain:\n" +
                                           as_file.substr(0, 500));
  }
  GPUIDLE_FUZZ_CHECK(one == two, "\n--- one member:\n" + one.substr(0, 500) +
                                     "\n--- two members:\n" + two.substr(0, 500));
  return 0;
}
