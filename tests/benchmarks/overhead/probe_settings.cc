// The overhead benchmark's side of the collector's probe seam (lib/collect/collector_probes.h):
// what its scripts ask of a probe build's collections, from two environment variables. Only a
// build configured with -DGPUIDLE_COLLECTOR_PROBES=ON compiles it into the collector (see
// lib/CMakeLists.txt), so that the product never reads them.
//
//   GPUIDLE_BENCH_LEAVE_OUT    parts of the collector to leave out (or, with a leading '+', to
//                              add), comma-separated: runtime, driver, other-kinds, decode, ...
//   GPUIDLE_BENCH_API_RECORDS  how the launch, sync, copy and wait-event calls are recorded:
//                              callbacks (the product's way), driver-callbacks, auto, ids, kinds
#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "collect/collector_probes.h"

namespace gpuidle::internal {
namespace {

constexpr std::pair<absl::string_view, CollectorPart> kParts[] = {
    {"runtime", kPartRuntimeCalls},
    {"driver", kPartDriverCalls},
    {"other-kinds", kPartOtherKinds},
    {"decode", kPartDecode},
    {"subscriber", kPartSubscriber},
    {"system-thread-ids", kPartSystemThreadIds},
    {"flush-period", kPartFlushPeriod},
    {"nested-call-skip", kPartNestedCallSkip},
    {"detach", kPartDetach},
    {"memcpy-records", kPartMemcpyRecords},
    {"memset-records", kPartMemsetRecords},
    {"sync-records", kPartSyncRecords},
    {"event-records", kPartEventRecords},
    {"device-records", kPartDeviceRecords},
    {"call-timing", kPartCallTiming},
    {"cupti-clock", kPartCuptiClock},
    {"+latency-timestamps", kAddLatencyTimestamps},
    {"+large-device-buffers", kAddLargeDeviceBuffers},
};

// "runtime,decode" -> the parts' bits; an unknown name is an error naming it and every known one.
absl::StatusOr<uint32_t> ParseParts(absl::string_view names) {
  uint32_t bits = 0;
  for (absl::string_view name : absl::StrSplit(names, ',', absl::SkipWhitespace())) {
    name = absl::StripAsciiWhitespace(name);
    const auto* part = std::find_if(std::begin(kParts), std::end(kParts),
                                    [&](const auto& p) { return p.first == name; });
    if (part == std::end(kParts)) {
      const auto append_name = [](std::string* out, const auto& p) {
        absl::StrAppend(out, p.first);
      };
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown collector part '", name, "' (", absl::StrJoin(kParts, ", ", append_name), ")"));
    }
    bits |= part->second;
  }
  return bits;
}

absl::StatusOr<ApiRecords> ParseApiRecords(absl::string_view name) {
  if (name == "callbacks") return ApiRecords::kCallbacks;
  if (name == "driver-callbacks") return ApiRecords::kDriverCallbacks;
  if (name == "auto") return ApiRecords::kAuto;
  if (name == "ids") return ApiRecords::kIdsOnly;
  if (name == "kinds") return ApiRecords::kWholeKinds;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown API record mode '", name, "' (callbacks, driver-callbacks, auto, ids, kinds)"));
}

}  // namespace

absl::StatusOr<CollectorProbes> BenchmarkProbes() {
  CollectorProbes probes;
  if (const char* parts = std::getenv("GPUIDLE_BENCH_LEAVE_OUT"); parts != nullptr) {
    absl::StatusOr<uint32_t> bits = ParseParts(parts);
    if (!bits.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("GPUIDLE_BENCH_LEAVE_OUT: ", bits.status().message()));
    }
    probes.leave_out = *bits;
  }
  if (const char* mode = std::getenv("GPUIDLE_BENCH_API_RECORDS"); mode != nullptr && *mode) {
    absl::StatusOr<ApiRecords> records = ParseApiRecords(mode);
    if (!records.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("GPUIDLE_BENCH_API_RECORDS: ", records.status().message()));
    }
    probes.api_records = *records;
  }
  return probes;
}

}  // namespace gpuidle::internal
