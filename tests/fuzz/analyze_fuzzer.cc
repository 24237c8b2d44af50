// libFuzzer harness (e): the analysis of whatever the Kineto reader accepts. Not a reader, but
// the reader's time invariants (model/timeline.h) are there for it: on any timeline they allow,
// the report must have no negative time, no share of lost time above 100%, busy + idle within
// the window, and output that is valid UTF-8 (the JSON report parses).
#include <cstddef>
#include <cstdint>
#include <string>

#include "analysis/analyze.h"
#include "fuzz_support.h"
#include "gpuidle/analyze.h"
#include "ingest/kineto_reader.h"
#include "rapidjson/document.h"

namespace {

using gpuidle::fuzz::Fail;

void CheckIdle(const gpuidle::IdleBreakdown& idle) {
  for (int64_t ns : idle.ns) GPUIDLE_FUZZ_CHECK(ns >= 0);
}

void CheckReport(const gpuidle::Report& r) {
  GPUIDLE_FUZZ_CHECK(r.window_end_ns >= r.window_start_ns);
  for (const gpuidle::DeviceReport& d : r.devices) {
    GPUIDLE_FUZZ_CHECK(d.window_ns >= 0 && d.window_end_ns - d.window_start_ns == d.window_ns);
    GPUIDLE_FUZZ_CHECK(d.steady_end_ns >= d.steady_start_ns);
    GPUIDLE_FUZZ_CHECK(d.busy_ns >= 0 && d.idle_ns >= 0 && d.comm_ns >= 0);
    GPUIDLE_FUZZ_CHECK(d.exposed_comm_ns >= 0 && d.exposed_comm_ns <= d.comm_ns);
    GPUIDLE_FUZZ_CHECK(d.busy_ns + d.idle_ns <= d.steady_end_ns - d.steady_start_ns);
    CheckIdle(d.idle);
    for (const gpuidle::OneOffTime& o : d.one_off) GPUIDLE_FUZZ_CHECK(o.ns >= 0);
  }
  for (const gpuidle::StepReport& s : r.steps) {
    GPUIDLE_FUZZ_CHECK(s.end_ns >= s.start_ns && s.busy_ns >= 0);
    CheckIdle(s.idle);
  }
  for (const gpuidle::GapRecord& g : r.longest_gaps) GPUIDLE_FUZZ_CHECK(g.end_ns >= g.start_ns);
  for (const gpuidle::Offender& o : r.offenders) GPUIDLE_FUZZ_CHECK(o.idle_ns >= 0);
  double shares = 0;
  for (const gpuidle::Advice& a : r.advice) {
    GPUIDLE_FUZZ_CHECK(a.share_of_lost_time >= 0 && a.share_of_lost_time <= 1 + 1e-9);
    shares += a.share_of_lost_time;
  }
  GPUIDLE_FUZZ_CHECK(shares <= 1 + 1e-6);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gpuidle::fuzz::InputSource source(absl::string_view(reinterpret_cast<const char*>(data), size),
                                    size_t{1} << 20);
  absl::StatusOr<gpuidle::internal::Timeline> t = gpuidle::internal::ReadKinetoTrace(source);
  if (!t.ok()) return 0;
  const gpuidle::AnalysisOptions options;
  absl::StatusOr<gpuidle::Report> report = gpuidle::internal::Analyze(*t, options);
  if (!report.ok()) {
    gpuidle::fuzz::CheckMessage(report.status().message());
    return 0;
  }
  CheckReport(*report);
  for (const char* format : {"json", "text"}) {
    absl::StatusOr<std::string> out = gpuidle::FormatReport(*report, format);
    GPUIDLE_FUZZ_CHECK(out.ok(), out.status().ToString());
    GPUIDLE_FUZZ_CHECK(gpuidle::internal::IsValidUtf8(*out), format);
    if (std::string(format) == "json") {
      rapidjson::Document doc;
      doc.Parse(out->c_str(), out->size());
      GPUIDLE_FUZZ_CHECK(!doc.HasParseError(), out->substr(0, 500));
    }
  }
  return 0;
}
