#include "core/time_units.h"

#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gpuidle::internal {
namespace {

__extension__ using Int128 = __int128;  // exact decimal arithmetic

constexpr int kMaxMantissaDigits = 36;  // fits in 128 bits with room for scaling

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

Int128 Pow10(int n) {
  Int128 r = 1;
  while (n-- > 0) r *= 10;
  return r;
}

// JSON numbers have no leading zeros: "0", "0.5" and "10" are numbers, "01" and "00.5" are not.
bool HasLeadingZero(absl::string_view digits) {
  return digits.size() > 1 && digits[0] == '0' && IsDigit(digits[1]);
}

int Log10OfPowerOfTen(int64_t v) {
  int n = 0;
  while (v > 1 && v % 10 == 0) {
    v /= 10;
    ++n;
  }
  return v == 1 ? n : -1;
}

}  // namespace

std::optional<int64_t> ParseDecimalToNs(absl::string_view text, int64_t scale_ns) {
  const int scale_exp = Log10OfPowerOfTen(scale_ns);
  if (scale_exp < 0) return std::nullopt;
  size_t i = 0;
  const size_t n = text.size();
  bool negative = false;
  if (i < n && text[i] == '-') {
    negative = true;
    ++i;
  }
  Int128 mantissa = 0;
  int digits = 0;
  int exponent = 0;  // value = mantissa * 10^exponent
  const size_t int_begin = i;
  for (; i < n && IsDigit(text[i]); ++i) {
    if (digits < kMaxMantissaDigits) {
      mantissa = mantissa * 10 + (text[i] - '0');
      if (mantissa != 0) ++digits;
    } else {
      ++exponent;  // drop digits beyond what matters for int64 nanoseconds
    }
  }
  if (i == int_begin || HasLeadingZero(text.substr(int_begin))) return std::nullopt;
  if (i < n && text[i] == '.') {
    ++i;
    const size_t frac_begin = i;
    for (; i < n && IsDigit(text[i]); ++i) {
      if (digits < kMaxMantissaDigits) {
        mantissa = mantissa * 10 + (text[i] - '0');
        if (mantissa != 0) ++digits;
        --exponent;
      }
    }
    if (i == frac_begin) return std::nullopt;
  }
  if (i < n && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < n && (text[i] == '+' || text[i] == '-')) exp_negative = text[i++] == '-';
    const size_t exp_begin = i;
    int exp_value = 0;
    for (; i < n && IsDigit(text[i]); ++i) {
      if (exp_value < 10000) exp_value = exp_value * 10 + (text[i] - '0');
    }
    if (i == exp_begin) return std::nullopt;
    exponent += exp_negative ? -exp_value : exp_value;
  }
  if (i != n) return std::nullopt;

  exponent += scale_exp;
  Int128 value;
  if (mantissa == 0) {
    value = 0;
  } else if (exponent >= 0) {
    if (exponent + digits > 20) return std::nullopt;  // far beyond int64
    value = mantissa * Pow10(exponent);
  } else if (-exponent > kMaxMantissaDigits + 1) {
    value = 0;
  } else {
    const Int128 divisor = Pow10(-exponent);
    value = (mantissa + divisor / 2) / divisor;
  }
  if (negative) value = -value;
  if (value > static_cast<Int128>(std::numeric_limits<int64_t>::max()) ||
      value < static_cast<Int128>(std::numeric_limits<int64_t>::min())) {
    return std::nullopt;
  }
  return static_cast<int64_t>(value);
}

std::optional<int64_t> ParseInt64(absl::string_view text) {
  if (text.empty()) return std::nullopt;
  size_t i = 0;
  const bool negative = text[0] == '-';
  if (negative) i = 1;
  if (i == text.size() || HasLeadingZero(text.substr(i))) return std::nullopt;
  Int128 value = 0;
  for (; i < text.size(); ++i) {
    if (!IsDigit(text[i])) return std::nullopt;
    value = value * 10 + (text[i] - '0');
    if (value > static_cast<Int128>(std::numeric_limits<int64_t>::max()) + 1) return std::nullopt;
  }
  if (negative) value = -value;
  if (value > std::numeric_limits<int64_t>::max() || value < std::numeric_limits<int64_t>::min()) {
    return std::nullopt;
  }
  return static_cast<int64_t>(value);
}

std::optional<uint64_t> ParseUint64(absl::string_view text) {
  if (text.empty() || HasLeadingZero(text)) return std::nullopt;
  Int128 value = 0;
  for (char c : text) {
    if (!IsDigit(c)) return std::nullopt;
    value = value * 10 + (c - '0');
    if (value > static_cast<Int128>(std::numeric_limits<uint64_t>::max())) return std::nullopt;
  }
  return static_cast<uint64_t>(value);
}

std::string FormatDuration(int64_t ns, bool sign) {
  const char* prefix = ns < 0 ? "-" : (sign && ns > 0 ? "+" : "");
  const uint64_t m = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  if (m < 1000) return absl::StrCat(prefix, m, " ns");
  struct Unit {
    double ns;
    const char* name;
  };
  constexpr Unit kUnits[] = {{1e3, "us"}, {1e6, "ms"}, {1e9, "s"}};
  for (size_t i = 0; i < 3; ++i) {
    const double v = static_cast<double>(m) / kUnits[i].ns;
    // The next unit once this one would print 1000 (999.96 ms is "1.00 s").
    if (i + 1 < 3 && v >= 999.5) continue;
    const int decimals = v >= 99.95 ? 0 : v >= 9.995 ? 1 : 2;
    return absl::StrFormat("%s%.*f %s", prefix, decimals, v, kUnits[i].name);
  }
  return "";
}

std::string FormatAdviceDuration(double ns) {
  if (ns >= 1e6) return absl::StrFormat("%.1f ms", ns / 1e6);
  return absl::StrFormat("%.0f us", ns / 1e3);
}

}  // namespace gpuidle::internal
