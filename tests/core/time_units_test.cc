#include "core/time_units.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuidle::internal {
namespace {

using ::testing::Eq;
using ::testing::Optional;

constexpr int64_t kUs = 1000;  // scale of microsecond text
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

TEST(ParseDecimalToNs, ConvertsKinetoMicrosecondsExactly) {
  // 5173123333453.718 us is 5173123333453718 ns (x 1000); as a double, 5173123333453.718 is
  // not exact, so the digits are converted as text.
  EXPECT_THAT(ParseDecimalToNs("5173123333453.718", kUs), Optional(5173123333453718));
  EXPECT_THAT(ParseDecimalToNs("5173113274307.264", kUs), Optional(5173113274307264));
  EXPECT_THAT(ParseDecimalToNs("5173123333453.7185", kUs), Optional(5173123333453719));
  EXPECT_THAT(ParseDecimalToNs("36299.800", kUs), Optional(36299800));
  // Beyond 2^53, where a double cannot tell neighbouring integers apart.
  EXPECT_THAT(ParseDecimalToNs("9007199254740993", 1), Optional(9007199254740993));
  EXPECT_THAT(ParseDecimalToNs("1790857026000000.001", kUs), Optional(1790857026000000001));
}

TEST(ParseDecimalToNs, ConvertsIntegersAndShortFractions) {
  EXPECT_THAT(ParseDecimalToNs("0", kUs), Optional(0));
  EXPECT_THAT(ParseDecimalToNs("7", kUs), Optional(7000));
  EXPECT_THAT(ParseDecimalToNs("7.5", kUs), Optional(7500));
  EXPECT_THAT(ParseDecimalToNs("0.001", kUs), Optional(1));
  EXPECT_THAT(ParseDecimalToNs("12", 1), Optional(12));
  EXPECT_THAT(ParseDecimalToNs("12", 1'000'000'000), Optional(12'000'000'000));
}

TEST(ParseDecimalToNs, RoundsSubNanosecondFractionsHalfAwayFromZero) {
  EXPECT_THAT(ParseDecimalToNs("0.0004", kUs), Optional(0));
  EXPECT_THAT(ParseDecimalToNs("0.0005", kUs), Optional(1));
  EXPECT_THAT(ParseDecimalToNs("1.2345", kUs), Optional(1235));
  EXPECT_THAT(ParseDecimalToNs("1.23449999", kUs), Optional(1234));
  EXPECT_THAT(ParseDecimalToNs("1.2346", kUs), Optional(1235));
  EXPECT_THAT(ParseDecimalToNs("-0.0005", kUs), Optional(-1));
  EXPECT_THAT(ParseDecimalToNs("-1.2345", kUs), Optional(-1235));
  EXPECT_THAT(ParseDecimalToNs("-0.0004", kUs), Optional(0));
  EXPECT_THAT(ParseDecimalToNs("2.5", 1), Optional(3));
  EXPECT_THAT(ParseDecimalToNs("-2.5", 1), Optional(-3));
}

TEST(ParseDecimalToNs, RoundsFractionsLongerThanTheMantissaCorrectly) {
  // 40 nines after the point: the value is just below 2.
  EXPECT_THAT(ParseDecimalToNs("1.9999999999999999999999999999999999999999", 1), Optional(2));
  EXPECT_THAT(ParseDecimalToNs("0.4999999999999999999999999999999999999999", 1), Optional(0));
  EXPECT_THAT(ParseDecimalToNs("0.0000000000000000000000000000000000000001", kUs), Optional(0));
  // 20 integer digits scaled down: 1234567890.12345678905 ns.
  EXPECT_THAT(ParseDecimalToNs("12345678901234567890.5e-10", 1), Optional(1234567890));
}

TEST(ParseDecimalToNs, AppliesExponents) {
  EXPECT_THAT(ParseDecimalToNs("1e3", kUs), Optional(1'000'000));
  EXPECT_THAT(ParseDecimalToNs("1E3", kUs), Optional(1'000'000));
  EXPECT_THAT(ParseDecimalToNs("2.5e+2", kUs), Optional(250'000));
  EXPECT_THAT(ParseDecimalToNs("1.5E-3", kUs), Optional(2));  // 1.5 ns
  EXPECT_THAT(ParseDecimalToNs("123e-5", kUs), Optional(1));  // 1.23 ns
  EXPECT_THAT(ParseDecimalToNs("5.173123333453718e12", kUs), Optional(5173123333453718));
  EXPECT_THAT(ParseDecimalToNs("1e-400", kUs), Optional(0));
  EXPECT_THAT(ParseDecimalToNs("0e999999", kUs), Optional(0));
  EXPECT_THAT(ParseDecimalToNs("-4e-1", 1), Optional(0));
  EXPECT_THAT(ParseDecimalToNs("-6e-1", 1), Optional(-1));
}

TEST(ParseDecimalToNs, ConvertsNegativeNumbers) {
  EXPECT_THAT(ParseDecimalToNs("-12.5", kUs), Optional(-12500));
  EXPECT_THAT(ParseDecimalToNs("-0", kUs), Optional(0));
  EXPECT_THAT(ParseDecimalToNs("-1e2", kUs), Optional(-100'000));
}

TEST(ParseDecimalToNs, AcceptsTheWholeInt64Range) {
  EXPECT_THAT(ParseDecimalToNs("9223372036854775807", 1), Optional(kInt64Max));
  EXPECT_THAT(ParseDecimalToNs("9223372036854775.807", kUs), Optional(kInt64Max));
  EXPECT_THAT(ParseDecimalToNs("9223372036854775.8074", kUs), Optional(kInt64Max));
  EXPECT_THAT(ParseDecimalToNs("-9223372036854775807", 1), Optional(-kInt64Max));
  EXPECT_THAT(ParseDecimalToNs("-9223372036854775808", 1), Optional(kInt64Min));
  EXPECT_THAT(ParseDecimalToNs("-9223372036854775.808", kUs), Optional(kInt64Min));
}

TEST(ParseDecimalToNs, RejectsValuesBeyondInt64) {
  EXPECT_EQ(ParseDecimalToNs("9223372036854775808", 1), std::nullopt);
  EXPECT_EQ(ParseDecimalToNs("9223372036854775.8075", kUs), std::nullopt);  // rounds up
  EXPECT_EQ(ParseDecimalToNs("9223372036854775.808", kUs), std::nullopt);
  EXPECT_EQ(ParseDecimalToNs("-9223372036854775809", 1), std::nullopt);
  EXPECT_EQ(ParseDecimalToNs("-9223372036854775.8085", kUs), std::nullopt);
  EXPECT_EQ(ParseDecimalToNs("1e19", 1), std::nullopt);
  EXPECT_EQ(ParseDecimalToNs("1e16", kUs), std::nullopt);
  EXPECT_EQ(ParseDecimalToNs("1e400", kUs), std::nullopt);
  EXPECT_EQ(ParseDecimalToNs("99999999999999999999999999999999999999999999", kUs), std::nullopt);
}

TEST(ParseDecimalToNs, RejectsTextThatIsNotAJsonNumber) {
  for (const char* text : {"",      "1.",  ".5",       "abc",       "1e",   "1e+", "1e-",  "-",
                           "+1",    "1x",  " 1",       "1 ",        "0x10", "--1", "1..2", "1.2.3",
                           "1e2e3", "NaN", "Infinity", "-Infinity", "01",   "-01", "00.5"}) {
    EXPECT_EQ(ParseDecimalToNs(text, kUs), std::nullopt) << "\"" << text << "\"";
  }
}

TEST(ParseDecimalToNs, RejectsScalesThatAreNotPowersOfTen) {
  EXPECT_EQ(ParseDecimalToNs("1", 0), std::nullopt);
  EXPECT_EQ(ParseDecimalToNs("1", 3), std::nullopt);
  EXPECT_EQ(ParseDecimalToNs("1", 1001), std::nullopt);
  EXPECT_EQ(ParseDecimalToNs("1", -1000), std::nullopt);
}

TEST(ParseInt64, ParsesTheWholeRange) {
  EXPECT_THAT(ParseInt64("0"), Optional(0));
  EXPECT_THAT(ParseInt64("-0"), Optional(0));
  EXPECT_THAT(ParseInt64("544"), Optional(544));
  EXPECT_THAT(ParseInt64("-17"), Optional(-17));
  EXPECT_THAT(ParseInt64("9223372036854775807"), Optional(kInt64Max));
  EXPECT_THAT(ParseInt64("-9223372036854775808"), Optional(kInt64Min));
  EXPECT_THAT(ParseInt64("1790857026000000000"), Optional(1790857026000000000));
}

TEST(ParseInt64, RejectsOverflow) {
  EXPECT_EQ(ParseInt64("9223372036854775808"), std::nullopt);
  EXPECT_EQ(ParseInt64("-9223372036854775809"), std::nullopt);
  EXPECT_EQ(ParseInt64("18446744073709551616"), std::nullopt);
  EXPECT_EQ(ParseInt64("99999999999999999999999999999999999999999999999999"), std::nullopt);
}

TEST(ParseInt64, RejectsTextThatIsNotAJsonInteger) {
  for (const char* text :
       {"", "-", "+1", "1.0", "1e3", " 1", "1 ", "0x1", "abc", "--1", "01", "-01"}) {
    EXPECT_EQ(ParseInt64(text), std::nullopt) << "\"" << text << "\"";
  }
}

TEST(ParseUint64, ParsesTheWholeRange) {
  EXPECT_THAT(ParseUint64("0"), Optional(Eq(0u)));
  EXPECT_THAT(ParseUint64("18446744073709551615"), Optional(std::numeric_limits<uint64_t>::max()));
  EXPECT_THAT(ParseUint64("9223372036854775808"), Optional(Eq(9223372036854775808u)));
}

TEST(ParseUint64, RejectsOverflowNegativesAndNonIntegers) {
  for (const char* text : {"18446744073709551616", "99999999999999999999999999999999999999999",
                           "-1", "-0", "", "+1", "1.5", "1e3", " 1", "01"}) {
    EXPECT_EQ(ParseUint64(text), std::nullopt) << "\"" << text << "\"";
  }
}

}  // namespace
}  // namespace gpuidle::internal
