#include "ingest/reader_warnings.h"

#include "absl/strings/str_cat.h"
#include "core/text_safety.h"
#include "ingest/json_scanners.h"

namespace gpuidle::internal::kineto {

void KeepCutText(std::string* dst, absl::string_view text, ReaderWarnings* w) {
  *dst = Shorten(text, kMaxKeptStringBytes);
  ++w->cut_strings;
}

std::string ValidText(absl::string_view text, ReaderWarnings* w) {
  if (IsAscii(text) || IsValidUtf8(text)) return std::string(text);
  size_t replaced = 0;
  std::string valid = ToValidUtf8(text, &replaced);
  w->invalid_utf8_bytes += replaced;
  return valid.size() > kMaxKeptStringBytes ? Shorten(valid, kMaxKeptStringBytes) : valid;
}

std::string ProblemText(Field f, Problem p) {
  switch (p) {
    case Problem::kWrongType:
      return absl::StrCat("is not ", ExpectedType(f));
    case Problem::kNotInteger:
      return "is not an integer";
    case Problem::kOutOfRange:
      return "is out of range";
    case Problem::kNegative:
      return "is negative";
    case Problem::kUnknownValue:
      return absl::StrCat("is not one of ", AllowedValues(f));
    case Problem::kMissing:
      return "is missing";
    case Problem::kNone:
      break;
  }
  return "cannot be used";
}

void AppendWarnings(const ReaderWarnings& w, std::vector<std::string>* out) {
  if (w.not_objects != 0) {
    out->push_back(absl::StrCat("skipped ", w.not_objects,
                                " entries of \"traceEvents\" that are "
                                "not objects"));
  }
  for (const auto& [key, count] : w.fields) {
    const auto [category, field, problem, skipped] = key;
    const absl::string_view label = CategoryLabel(static_cast<EventCategory>(category));
    const std::string events =
        absl::StrCat(count.count, " ", label, label.empty() ? "" : " ", "events");
    const Field f = static_cast<Field>(field);
    const Problem p = static_cast<Problem>(problem);
    std::string line;
    if (p == Problem::kMissing) {
      line = absl::StrCat("skipped ", events, " without \"", FieldName(f), "\"");
    } else if (skipped) {
      line = absl::StrCat("skipped ", events, " whose \"", FieldName(f), "\" ", ProblemText(f, p));
    } else {
      line = absl::StrCat("ignored the \"", FieldName(f), "\" of ", events, ": it ",
                          ProblemText(f, p));
    }
    if (!count.example.empty()) absl::StrAppend(&line, " (first: ", count.example, ")");
    out->push_back(std::move(line));
  }
  if (w.cut_strings != 0) {
    out->push_back(absl::StrCat("cut ", w.cut_strings, " names or stacks longer than ",
                                kMaxKeptStringBytes, " bytes to their first ", kMaxKeptStringBytes,
                                " bytes (ending in \"...\")"));
  }
  if (w.invalid_utf8_bytes != 0) {
    out->push_back(
        absl::StrCat(w.invalid_utf8_bytes, " invalid UTF-8 bytes in names replaced by U+FFFD"));
  }
  if (w.unplaced_ranges != 0) {
    out->push_back(absl::StrCat("skipped ", w.unplaced_ranges,
                                " cuda_profiler_range events on no known device (no "
                                "\"args.device\", and a \"pid\" that no device work has)"));
  }
  if (w.profiler_ranges != 0) {
    // Kineto's range profiler (torch.profiler's profiler_metrics) cannot run beside kernel
    // tracing, and spreads its ranges evenly over the profiled span (CuptiRangeProfiler.cpp).
    std::string line = absl::StrCat(
        w.profiler_ranges,
        " cuda_profiler_range events (CUPTI's range profiler: torch.profiler's profiler_metrics) "
        "are read as device work, but Kineto spaces them evenly over the profiled span: their "
        "times, and the busy and idle time between them, are not the GPU's; profile without "
        "profiler_metrics for the idle analysis");
    if (w.profiler_ranges_with_counters != 0) {
      absl::StrAppend(&line, "; the GPU counters of ", w.profiler_ranges_with_counters,
                      " of them are read as GPU throughput, each range weighing the same");
    }
    out->push_back(std::move(line));
  }
  if (w.ops_beyond_device_limit != 0) {
    out->push_back(absl::StrCat("skipped ", w.ops_beyond_device_limit,
                                " device events on devices beyond the first ", kMaxDevicesPerTrace,
                                " (gpuidle reads at most ", kMaxDevicesPerTrace,
                                " devices per trace)"));
  }
  if (w.device_properties_beyond_limit != 0) {
    out->push_back(absl::StrCat("ignored ", w.device_properties_beyond_limit,
                                " \"deviceProperties\" entries beyond the first ",
                                kMaxDevicesPerTrace));
  }
  if (w.zero_timestamp_count_saturated) {
    out->push_back(
        "the count of records without time stamps exceeds the largest 64-bit integer: it is "
        "shown as that");
  }
  if (w.bad_device_properties != 0) {
    out->push_back(absl::StrCat("ignored ", w.bad_device_properties,
                                " \"deviceProperties\" entries whose \"id\" is not an integer"));
  }
  if (w.bad_base_time) {
    out->push_back(
        "ignored \"baseTimeNanoseconds\": it is not a 64-bit integer; time stamps are "
        "as written, and may not line up with other ranks'");
  }
  if (w.bad_distributed_info) {
    out->push_back(
        "ignored a \"distributedInfo\" rank or world_size that is not an integer from 0 to "
        "2147483647");
  }
}

}  // namespace gpuidle::internal::kineto
