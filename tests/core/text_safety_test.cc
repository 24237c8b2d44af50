#include "core/text_safety.h"

#include <string>

#include "gtest/gtest.h"

namespace gpuidle::internal {
namespace {

TEST(ToValidUtf8, KeepsValidTextAndReplacesEachBadByte) {
  size_t replaced = 0;
  EXPECT_EQ(ToValidUtf8("gemm \xc3\xa9\xe2\x82\xac", &replaced), "gemm \xc3\xa9\xe2\x82\xac");
  EXPECT_EQ(replaced, 0u);
  // A lone continuation byte, a truncated sequence, an overlong form and a surrogate.
  EXPECT_EQ(ToValidUtf8("a\x80"
                        "b\xe2\x82"
                        "c\xc0\xaf"
                        "d\xed\xa0\x80",
                        &replaced),
            "a\xef\xbf\xbd"
            "b\xef\xbf\xbd\xef\xbf\xbd"
            "c\xef\xbf\xbd\xef\xbf\xbd"
            "d\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(replaced, 8u);
  EXPECT_TRUE(IsValidUtf8(ToValidUtf8("\xff\xfe\xf5\x80")));
}

TEST(Printable, EscapesControlsKeepsText) {
  EXPECT_EQ(Printable("k\x1b[2Jx"), "k\\x1b[2Jx");
  EXPECT_EQ(Printable("\xc2\x9b"
                      "31m"),
            "\\u009b31m");  // C1 CSI
  EXPECT_EQ(Printable("a\xe2\x80\xae"
                      "b"),
            "a\\u202eb");  // right-to-left override
  // The line and paragraph separators (issue 29: they reached the terminal raw).
  EXPECT_EQ(Printable("a\xe2\x80\xa8"
                      "b\xe2\x80\xa9"
                      "c"),
            "a\\u2028b\\u2029c");
  EXPECT_EQ(Printable("\xe6\x97\xa5\xe6\x9c\xac"), "\xe6\x97\xa5\xe6\x9c\xac");
  EXPECT_EQ(Printable("bad\xff"), "bad\\xff");
}

TEST(QuoteForMessage, ShortValuesWholeLongOnesCut) {
  EXPECT_EQ(QuoteForMessage("banana"), "\"banana\"");
  const std::string huge(100'000, 'x');
  const std::string quoted = QuoteForMessage(huge);
  EXPECT_LT(quoted.size(), 120u);
  EXPECT_NE(quoted.find("(100000 bytes)"), std::string::npos);
  EXPECT_EQ(QuoteForMessage("\n"), "\"\\x0a\"");
}

TEST(Shorten, NeverCutsInsideASequence) {
  EXPECT_EQ(Shorten("abcdef", 10), "abcdef");
  EXPECT_EQ(Shorten("ab\xe2\x82\xac\xe2\x82\xac", 7), "ab...");
}

}  // namespace
}  // namespace gpuidle::internal
