// Exact conversion of decimal time stamps (as text) to int64 nanoseconds, and durations as the
// text outputs write them.
//
// Trace formats write microseconds with three decimals ("5173123333453.718"); a double
// holds only ~16 significant digits, so these are converted from the text, digit by digit.
#ifndef GPUIDLE_LIB_CORE_TIME_UNITS_H_
#define GPUIDLE_LIB_CORE_TIME_UNITS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace gpuidle::internal {

// Parses a JSON number written in a unit of `scale_ns` nanoseconds (1000 for microseconds,
// 1 for nanoseconds; a power of ten) into nanoseconds. Fractions of a nanosecond are rounded
// half away from zero. Returns nullopt for text that is not a JSON number or whose value
// does not fit in int64 nanoseconds.
std::optional<int64_t> ParseDecimalToNs(absl::string_view text, int64_t scale_ns);

// Parses a JSON integer (no fraction, no exponent) into int64 / uint64.
std::optional<int64_t> ParseInt64(absl::string_view text);
std::optional<uint64_t> ParseUint64(absl::string_view text);

// A duration with three significant digits in the unit that suits it ("2.61 s", "120 ms",
// "15.2 us", "0 ns"), signed when asked ("+1.20 ms"; negatives always are: "-20.0 ms").
std::string FormatDuration(int64_t ns, bool sign = false);

// A duration as advice states it, in milliseconds with one decimal from 1 ms, else in whole
// microseconds ("41.2 ms", "380 us").
std::string FormatAdviceDuration(double ns);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_CORE_TIME_UNITS_H_
