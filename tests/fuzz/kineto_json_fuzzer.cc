// libFuzzer harness (a): the Kineto / PyTorch-profiler JSON reader on plain bytes.
//
// Each input is read twice: in 1 MiB chunks (the fast scanners see whole tokens) and in chunks
// of a few bytes (every token crosses a chunk boundary and RapidJSON's own parsers take over).
// Both must give the same timeline, or the same error, and every timeline must keep the
// reader's limits (fuzz_support.h).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "ingest/kineto_reader.h"
#include "report/trace_writer.h"

namespace {

// The outcome of one read, as text to compare: the timeline as a gpuidle trace, or the error.
std::string Outcome(absl::string_view bytes, size_t chunk, size_t max_read) {
  gpuidle::fuzz::InputSource source(bytes, max_read);
  absl::StatusOr<gpuidle::internal::Timeline> t = gpuidle::internal::ReadKinetoTrace(source, chunk);
  if (!t.ok()) {
    gpuidle::fuzz::CheckMessage(t.status().message());
    return t.status().ToString();
  }
  gpuidle::fuzz::CheckTimeline(*t);
  return gpuidle::internal::FormatGpuidleTrace(*t);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  const std::string whole = Outcome(bytes, size_t{1} << 20, size_t{1} << 20);
  // 1 to 8 bytes per chunk, from the input's length: varied, and the same for a replay.
  const size_t tiny = 1 + size % 8;
  const std::string pieces = Outcome(bytes, tiny, tiny + 3);
  GPUIDLE_FUZZ_CHECK(whole == pieces, "\n--- 1 MiB chunks:\n" + whole.substr(0, 500) +
                                          "\n--- tiny chunks:\n" + pieces.substr(0, 500));
  return 0;
}
