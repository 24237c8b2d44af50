// libFuzzer harness (f): gpuidle's JSON reports read back (ingest/report_reader.h), the input of
// `gpuidle analyze report.*.json`.
//
// A report read from the input is written as JSON and read back: it must read, and give the same
// JSON again (the writer's output is a fixed point of the pair). Errors are short.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/text_safety.h"
#include "fuzz_support.h"
#include "ingest/report_reader.h"
#include "report/writer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<gpuidle::Report> r = gpuidle::internal::ParseReportJson(bytes, "fuzz.json");
  if (!r.ok()) {
    gpuidle::fuzz::CheckMessage(r.status().message());
    return 0;
  }
  const std::string written = gpuidle::internal::MakeJsonWriter()->Write(*r);
  GPUIDLE_FUZZ_CHECK(gpuidle::internal::IsValidUtf8(written));
  absl::StatusOr<gpuidle::Report> back = gpuidle::internal::ParseReportJson(written, "again.json");
  GPUIDLE_FUZZ_CHECK(back.ok(),
                     back.status().ToString() + "\n--- written:\n" + written.substr(0, 2000));
  const std::string again = gpuidle::internal::MakeJsonWriter()->Write(*back);
  GPUIDLE_FUZZ_CHECK(again == written, "\n--- first:\n" + written.substr(0, 2000) +
                                           "\n--- again:\n" + again.substr(0, 2000));
  return 0;
}
