// Exact number and time stamp parsing for the Kineto reader: numbers arrive as the text the
// trace holds, and time stamps become nanoseconds without a detour through double.
#ifndef GPUIDLE_LIB_INGEST_TRACE_NUMBERS_H_
#define GPUIDLE_LIB_INGEST_TRACE_NUMBERS_H_

#include <cstdint>
#include <optional>

#include "absl/base/attributes.h"
#include "absl/strings/ascii.h"
#include "absl/strings/string_view.h"
#include "core/time_units.h"

namespace gpuidle::internal::kineto {

inline constexpr int64_t kNsPerUs = 1000;

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Fast paths for the numbers that fill a trace: plain integers (ids, pids, correlations) and
// microseconds with at most three decimals (ts, dur). Their values are exact, so these give
// what ParseInt64 and ParseDecimalToNs give; any other text goes to those.
inline std::optional<int64_t> ParseEventInt(absl::string_view text) {
  if (text.empty() || text.size() > 18 || (text[0] == '0' && text.size() > 1)) {
    return ParseInt64(text);
  }
  int64_t v = 0;
  for (const char c : text) {
    if (!IsDigit(c)) return ParseInt64(text);
    v = v * 10 + (c - '0');
  }
  return v;
}

// Always inline: every event has a ts and most a dur.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline std::optional<int64_t> ParseMicrosToNs(absl::string_view text) {
  const size_t dot = text.find('.');
  const size_t whole = dot == absl::string_view::npos ? text.size() : dot;
  const size_t decimals = dot == absl::string_view::npos ? 0 : text.size() - dot - 1;
  if (whole == 0 || whole > 15 || (text[0] == '0' && whole > 1) ||
      (dot != absl::string_view::npos && (decimals == 0 || decimals > 3))) {
    return ParseDecimalToNs(text, kNsPerUs);
  }
  int64_t us = 0;
  for (size_t i = 0; i < whole; ++i) {
    if (!IsDigit(text[i])) return ParseDecimalToNs(text, kNsPerUs);
    us = us * 10 + (text[i] - '0');
  }
  int64_t ns = 0;
  for (size_t i = 0; i < 3; ++i) {
    const char c = i < decimals ? text[dot + 1 + i] : '0';
    if (!IsDigit(c)) return ParseDecimalToNs(text, kNsPerUs);
    ns = ns * 10 + (c - '0');
  }
  return us * kNsPerUs + ns;
}

// An integer given as a JSON number or as a string: ROCm traces write some ("bytes": "9216",
// "stream": "0x0", "device": "0"). Strings may be decimal or 0x-prefixed hexadecimal; a hex
// value beyond int64 keeps its bits (stream handles are addresses). nullopt: not an integer.
inline std::optional<int64_t> ParseIntegerText(absl::string_view text, bool is_string) {
  if (!is_string) return ParseEventInt(text);
  text = absl::StripAsciiWhitespace(text);
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    uint64_t v = 0;
    text.remove_prefix(2);
    if (text.size() > 16) return std::nullopt;
    for (const char c : text) {
      const int digit = IsDigit(c)             ? c - '0'
                        : c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                               : -1;
      if (digit < 0) return std::nullopt;
      v = v * 16 + static_cast<uint64_t>(digit);
    }
    return static_cast<int64_t>(v);
  }
  return ParseInt64(text);
}

// A stand-in id for a pid or tid that is no number ("Spans", "PyTorch Profiler"): the same
// text always gives the same id (FNV-1a).
inline uint64_t IdOfName(absl::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace gpuidle::internal::kineto

#endif  // GPUIDLE_LIB_INGEST_TRACE_NUMBERS_H_
