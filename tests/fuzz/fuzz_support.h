// Shared by the libFuzzer harnesses of tests/fuzz: the input as a ByteSource, and the checks
// every timeline a reader returns must pass (the limits and invariants of docs/TRACE_INPUTS.md
// and model/timeline.h). A failed check aborts, which libFuzzer reports as a crash with the
// input that caused it.
#ifndef GPUIDLE_TESTS_FUZZ_FUZZ_SUPPORT_H_
#define GPUIDLE_TESTS_FUZZ_FUZZ_SUPPORT_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/text_safety.h"
#include "ingest/byte_source.h"
#include "ingest/kineto_reader.h"
#include "model/timeline.h"

namespace gpuidle::fuzz {

// Fails the run: the message, then abort (a crash libFuzzer saves the input of).
[[noreturn]] inline void Fail(const char* what, absl::string_view detail = {}) {
  std::fprintf(stderr, "fuzz check failed: %s %.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  std::abort();
}

// GPUIDLE_FUZZ_CHECK(condition) or GPUIDLE_FUZZ_CHECK(condition, detail to print).
#define GPUIDLE_FUZZ_CHECK(condition, ...)                                          \
  do {                                                                              \
    if (!(condition)) ::gpuidle::fuzz::Fail(#condition __VA_OPT__(, ) __VA_ARGS__); \
  } while (0)

// The input as plain bytes (no sniffing: the JSON reader sees exactly these), handed out in
// reads of at most `max_read` bytes, as a pipe may.
class InputSource : public internal::ByteSource {
 public:
  InputSource(absl::string_view bytes, size_t max_read) : bytes_(bytes), max_read_(max_read) {}
  absl::StatusOr<size_t> Read(char* buffer, size_t n) override {
    const size_t k = std::min({n, max_read_, bytes_.size()});
    std::memcpy(buffer, bytes_.data(), k);
    bytes_.remove_prefix(k);
    read_ += k;
    return k;
  }
  uint64_t file_bytes_read() const override { return read_; }

 private:
  absl::string_view bytes_;
  size_t max_read_;
  uint64_t read_ = 0;
};

template <typename T>
void CheckTimes(const T& start, const T& end) {
  GPUIDLE_FUZZ_CHECK(start >= internal::kMinTimeNs && end < internal::kMaxTimeNs);
  GPUIDLE_FUZZ_CHECK(start <= end && end - start <= internal::kMaxDurationNs);
}

// What every timeline a reader returns satisfies, whatever the input.
inline void CheckTimeline(const internal::Timeline& t) {
  using namespace internal;
  GPUIDLE_FUZZ_CHECK(t.devices.size() <= kMaxDevicesPerTrace);
  GPUIDLE_FUZZ_CHECK(t.info.visible_devices.size() <= kMaxDevicesPerTrace);
  for (size_t i = 0; i < t.strings.size(); ++i) {
    const absl::string_view s = t.strings.Get(static_cast<StringId>(i));
    GPUIDLE_FUZZ_CHECK(s.size() <= kMaxKeptStringBytes);
    GPUIDLE_FUZZ_CHECK(IsValidUtf8(s), s.substr(0, 80));
  }
  GPUIDLE_FUZZ_CHECK(IsValidUtf8(t.info.host));
  for (const std::string& name : t.info.visible_device_names) {
    GPUIDLE_FUZZ_CHECK(IsValidUtf8(name) && name.size() <= kMaxKeptStringBytes);
  }
  int64_t lo = kMaxTimeNs, hi = kMinTimeNs;
  const auto see = [&](int64_t start, int64_t end) {
    CheckTimes(start, end);
    lo = std::min(lo, start);
    hi = std::max(hi, end);
  };
  int previous_device = -1;
  for (const DeviceTimeline& d : t.devices) {
    GPUIDLE_FUZZ_CHECK(d.device > previous_device);  // sorted, distinct, not negative
    previous_device = d.device;
    GPUIDLE_FUZZ_CHECK(IsValidUtf8(d.name));
    for (size_t i = 0; i < d.ops.size(); ++i) {
      see(d.ops[i].start_ns, d.ops[i].end_ns);
      GPUIDLE_FUZZ_CHECK(d.ops[i].name < t.strings.size());
      if (i > 0) GPUIDLE_FUZZ_CHECK(d.ops[i - 1].start_ns <= d.ops[i].start_ns);
    }
  }
  for (size_t i = 0; i < t.calls.size(); ++i) {
    see(t.calls[i].start_ns, t.calls[i].end_ns);
    GPUIDLE_FUZZ_CHECK(t.calls[i].name < t.strings.size());
    if (i > 0) GPUIDLE_FUZZ_CHECK(t.calls[i - 1].start_ns <= t.calls[i].start_ns);
  }
  for (size_t i = 0; i < t.ranges.size(); ++i) {
    see(t.ranges[i].start_ns, t.ranges[i].end_ns);
    GPUIDLE_FUZZ_CHECK(t.ranges[i].name < t.strings.size());
    if (i > 0) GPUIDLE_FUZZ_CHECK(t.ranges[i - 1].start_ns <= t.ranges[i].start_ns);
  }
  for (const HostSample& s : t.samples) {
    see(s.time_ns, s.time_ns);
    GPUIDLE_FUZZ_CHECK(s.stack < t.strings.size());
  }
  if (lo <= hi) GPUIDLE_FUZZ_CHECK(hi - lo <= kMaxTimelineSpanNs);
  for (const std::string& w : t.info.warnings) GPUIDLE_FUZZ_CHECK(IsValidUtf8(w), w);
}

// Error messages quote values shortly: never the input's huge strings.
inline void CheckMessage(absl::string_view message) {
  GPUIDLE_FUZZ_CHECK(message.size() < 2048, message.substr(0, 200));
}

}  // namespace gpuidle::fuzz

#endif  // GPUIDLE_TESTS_FUZZ_FUZZ_SUPPORT_H_
