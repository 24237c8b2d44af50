// What the Kineto reader skipped or changed, counted while it reads and turned into warnings
// (Timeline::info.warnings) when it is done: one line per kind of problem, so memory stays
// bounded however many events are affected.
#ifndef GPUIDLE_LIB_INGEST_READER_WARNINGS_H_
#define GPUIDLE_LIB_INGEST_READER_WARNINGS_H_

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/string_view.h"
#include "ingest/kineto_reader.h"
#include "ingest/trace_event.h"
#include "ingest/trace_keys.h"

namespace gpuidle::internal::kineto {

struct ReaderWarnings {
  // One count per (category, field, problem, whether the event was skipped), with the first
  // unusable value seen.
  void Warn(EventCategory c, Field f, Problem p, bool skipped, absl::string_view example = {}) {
    FieldWarning& w = fields[{static_cast<uint8_t>(c), static_cast<uint8_t>(f),
                              static_cast<uint8_t>(p), skipped}];
    if (w.count++ == 0) w.example = std::string(example);
  }

  struct FieldWarning {
    uint64_t count = 0;
    std::string example;
  };
  std::map<std::tuple<uint8_t, uint8_t, uint8_t, bool>, FieldWarning> fields;
  uint64_t not_objects = 0;      // entries of traceEvents that are not objects
  uint64_t unplaced_ranges = 0;  // cuda_profiler_range events on no known device
  uint64_t profiler_ranges = 0;  // ... on one
  uint64_t profiler_ranges_with_counters = 0;
  uint64_t cut_strings = 0;
  uint64_t invalid_utf8_bytes = 0;
  uint64_t ops_beyond_device_limit = 0;
  uint64_t device_properties_beyond_limit = 0;
  bool zero_timestamp_count_saturated = false;
  uint64_t bad_device_properties = 0;
  bool bad_base_time = false;
  bool bad_distributed_info = false;
};

// A string the timeline keeps, as read: at most kMaxKeptStringBytes, a longer one cut (and
// counted) at a UTF-8 boundary. Whatever its length, the text arrives here bounded (the
// string scanners keep at most a chunk, or kMaxKeptStringBytes + 1 bytes).
void KeepCutText(std::string* dst, absl::string_view text, ReaderWarnings* w);
inline void KeepText(std::string* dst, absl::string_view text, ReaderWarnings* w) {
  if (text.size() <= kMaxKeptStringBytes) {
    dst->assign(text.data(), text.size());
    return;
  }
  KeepCutText(dst, text, w);
}

// A kept string as the timeline stores it: valid UTF-8, every invalid byte replaced by
// U+FFFD and counted (three bytes each, so it is cut again if it grew past the limit).
std::string ValidText(absl::string_view text, ReaderWarnings* w);

// "is not a number", "is negative", ...: what was wrong with a field.
std::string ProblemText(Field f, Problem p);

// Appends the warning lines, in a fixed order.
void AppendWarnings(const ReaderWarnings& w, std::vector<std::string>* out);

}  // namespace gpuidle::internal::kineto

#endif  // GPUIDLE_LIB_INGEST_READER_WARNINGS_H_
