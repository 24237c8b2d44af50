// The reader's number parsing: fast paths and the exact general parsers give the same values.
#include "ingest/trace_numbers.h"

#include <cstdint>
#include <optional>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"

namespace gpuidle::internal::kineto {
namespace {

TEST(TraceNumbers, MicrosecondsBecomeExactNanoseconds) {
  EXPECT_EQ(ParseMicrosToNs("0"), 0);
  EXPECT_EQ(ParseMicrosToNs("1.5"), 1500);
  EXPECT_EQ(ParseMicrosToNs("0.001"), 1);
  EXPECT_EQ(ParseMicrosToNs("5173123333453.718"), int64_t{5173123333453718});  // beyond a double
  EXPECT_EQ(ParseMicrosToNs("12.34"), 12340);
}

TEST(TraceNumbers, TextOutsideTheFastPathGoesToTheGeneralParser) {
  EXPECT_EQ(ParseMicrosToNs("-2.5"), -2500);
  EXPECT_EQ(ParseMicrosToNs("1.0005"), 1001);  // rounded half away from zero
  EXPECT_EQ(ParseMicrosToNs("1e3"), 1'000'000);
  EXPECT_EQ(ParseMicrosToNs("1."), std::nullopt);
  EXPECT_EQ(ParseMicrosToNs("abc"), std::nullopt);
  EXPECT_EQ(ParseMicrosToNs(""), std::nullopt);
  EXPECT_EQ(ParseMicrosToNs("99999999999999999999"), std::nullopt);  // beyond int64 ns
}

// The fast path is an optimisation only: on random microsecond values it agrees with
// ParseDecimalToNs, the exact parser it stands in for.
TEST(TraceNumbers, FastPathAgreesWithTheExactParser) {
  std::mt19937_64 rng(14);
  for (int i = 0; i < 20000; ++i) {
    const uint64_t whole = rng() % 10'000'000'000'000ull;
    constexpr int kPowers[] = {1, 10, 100, 1000, 10000};
    const int decimals = static_cast<int>(rng() % 5);
    std::string text = absl::StrCat(whole);
    if (decimals > 0) {
      const int fraction = static_cast<int>(rng() % static_cast<uint64_t>(kPowers[decimals]));
      absl::StrAppend(&text, ".", absl::StrFormat("%0*d", decimals, fraction));
    }
    EXPECT_EQ(ParseMicrosToNs(text), ParseDecimalToNs(text, kNsPerUs)) << text;
  }
}

TEST(TraceNumbers, EventIntegers) {
  EXPECT_EQ(ParseEventInt("0"), 0);
  EXPECT_EQ(ParseEventInt("123456789012345678"), int64_t{123456789012345678});
  EXPECT_EQ(ParseEventInt("-7"), -7);
  EXPECT_EQ(ParseEventInt("9223372036854775807"), INT64_MAX);  // 19 digits: general parser
  EXPECT_EQ(ParseEventInt("9223372036854775808"), std::nullopt);
  EXPECT_EQ(ParseEventInt("1.5"), std::nullopt);
  EXPECT_EQ(ParseEventInt(""), std::nullopt);
}

TEST(TraceNumbers, IntegersInStringsMayBeHexadecimal) {
  EXPECT_EQ(ParseIntegerText("9216", /*is_string=*/true), 9216);
  EXPECT_EQ(ParseIntegerText(" 42 ", true), 42);
  EXPECT_EQ(ParseIntegerText("0x0", true), 0);
  EXPECT_EQ(ParseIntegerText("0x7fA", true), 0x7fa);
  EXPECT_EQ(ParseIntegerText("0xffffffffffffffff", true), -1);  // an address keeps its bits
  EXPECT_EQ(ParseIntegerText("0x1ffffffffffffffff", true), std::nullopt);
  EXPECT_EQ(ParseIntegerText("0xg", true), std::nullopt);
  EXPECT_EQ(ParseIntegerText("0x10", /*is_string=*/false), std::nullopt);  // numbers are decimal
  EXPECT_EQ(ParseIntegerText("seven", true), std::nullopt);
}

TEST(TraceNumbers, NamesStandInForIdsTheSameWayEveryTime) {
  EXPECT_EQ(IdOfName("PyTorch Profiler"), IdOfName("PyTorch Profiler"));
  EXPECT_NE(IdOfName("Spans"), IdOfName("spans"));
  EXPECT_EQ(IdOfName(""), 1469598103934665603ull);  // FNV-1a's offset basis
}

}  // namespace
}  // namespace gpuidle::internal::kineto
