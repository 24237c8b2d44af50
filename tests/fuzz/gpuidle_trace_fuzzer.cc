// libFuzzer harness (c): gpuidle's own trace format (docs/TRACE_FORMAT.md, gpuidle.trace/2):
// the "gpuidle" object, host samples and gpuidle_* args, read by the Kineto reader, and the
// writer that produces them.
//
// A timeline read from the input is written as a gpuidle trace and read back: the trace must
// read, and give the same trace again (the writer's output is a fixed point of the pair).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "ingest/kineto_reader.h"
#include "report/trace_writer.h"

namespace {

absl::StatusOr<gpuidle::internal::Timeline> Read(absl::string_view text) {
  gpuidle::fuzz::InputSource source(text, size_t{1} << 20);
  return gpuidle::internal::ReadKinetoTrace(source);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<gpuidle::internal::Timeline> t = Read(bytes);
  if (!t.ok()) {
    gpuidle::fuzz::CheckMessage(t.status().message());
    return 0;
  }
  gpuidle::fuzz::CheckTimeline(*t);
  const std::string written = gpuidle::internal::FormatGpuidleTrace(*t);
  GPUIDLE_FUZZ_CHECK(gpuidle::internal::IsValidUtf8(written));
  absl::StatusOr<gpuidle::internal::Timeline> back = Read(written);
  GPUIDLE_FUZZ_CHECK(back.ok(),
                     back.status().ToString() + "\n--- written:\n" + written.substr(0, 2000));
  gpuidle::fuzz::CheckTimeline(*back);
  const std::string again = gpuidle::internal::FormatGpuidleTrace(*back);
  GPUIDLE_FUZZ_CHECK(again == written, "\n--- first:\n" + written.substr(0, 2000) +
                                           "\n--- again:\n" + again.substr(0, 2000));
  return 0;
}
