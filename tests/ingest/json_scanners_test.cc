// The reader's scanners over a chunk: where they stop, and what they leave to RapidJSON.
#include "ingest/json_scanners.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "ingest/byte_source.h"
#include "ingest/json_stream.h"

namespace gpuidle::internal::kineto {
namespace {

// The offset of the first special character of s, or its size.
size_t Special(const std::string& s) {
  return static_cast<size_t>(FindStringSpecial(s.data(), s.data() + s.size()) - s.data());
}

TEST(JsonScanners, FindStringSpecialStopsAtQuotesEscapesAndControlCharacters) {
  EXPECT_EQ(Special("abc\"def"), 3u);
  EXPECT_EQ(Special("abc\\\"def"), 3u);
  EXPECT_EQ(Special("ab\ncd"), 2u);
  EXPECT_EQ(Special(std::string("a\0b", 3)), 1u);
  EXPECT_EQ(Special("no end"), 6u);
  EXPECT_EQ(Special(""), 0u);
  EXPECT_EQ(Special("caf\xc3\xa9\""), 5u);  // UTF-8 bytes are plain text
  EXPECT_EQ(Special("\x7f\""), 1u);         // DEL is no control character for JSON
}

// Every position, in the 16-byte blocks and in the tail after them.
TEST(JsonScanners, FindStringSpecialFindsTheFirstOneAtEveryOffset) {
  for (size_t length : {1u, 15u, 16u, 17u, 40u}) {
    for (size_t at = 0; at < length; ++at) {
      for (char special : {'"', '\\', '\x01', '\x1f'}) {
        std::string s(length, 'x');
        s[at] = special;
        if (at + 1 < length) s[length - 1] = '"';  // a later one must not win
        EXPECT_EQ(Special(s), at) << "length " << length << " at " << at;
      }
    }
  }
}

// The end of the plain number at the start of s, or -1 when it is not one (or may go on).
int PlainNumberEnd(const std::string& s) {
  const char* end = ScanPlainNumber(s.data(), s.data() + s.size());
  return end == nullptr ? -1 : static_cast<int>(end - s.data());
}

TEST(JsonScanners, ScanPlainNumberTakesOnlyPlainNumbersThatEndInTheChunk) {
  EXPECT_EQ(PlainNumberEnd("123,"), 3);
  EXPECT_EQ(PlainNumberEnd("-0.5]"), 4);
  EXPECT_EQ(PlainNumberEnd("5173123333453.718}"), 17);
  EXPECT_EQ(PlainNumberEnd("0,"), 1);
  EXPECT_EQ(PlainNumberEnd("01,"), 1);   // RapidJSON stops there too (and then errs)
  EXPECT_EQ(PlainNumberEnd("123"), -1);  // may go on in the next chunk
  EXPECT_EQ(PlainNumberEnd("1.5"), -1);
  EXPECT_EQ(PlainNumberEnd("1e5,"), -1);  // exponents: RapidJSON's own code
  EXPECT_EQ(PlainNumberEnd("2E5,"), -1);
  EXPECT_EQ(PlainNumberEnd("1.,"), -1);
  EXPECT_EQ(PlainNumberEnd("-,"), -1);
  EXPECT_EQ(PlainNumberEnd("NaN,"), -1);
  EXPECT_EQ(PlainNumberEnd(".5,"), -1);
  EXPECT_EQ(PlainNumberEnd(std::string(300, '9') + ","), 300);
  EXPECT_EQ(PlainNumberEnd(std::string(301, '9') + ","), -1);  // "too big" for RapidJSON
}

TEST(JsonScanners, WhiteSpace) {
  EXPECT_TRUE(IsJsonSpace(' '));
  EXPECT_TRUE(IsJsonSpace('\t'));
  EXPECT_TRUE(IsJsonSpace('\r'));
  EXPECT_TRUE(IsJsonSpace('\n'));
  EXPECT_FALSE(IsJsonSpace('\v'));  // not JSON's
  EXPECT_FALSE(IsJsonSpace('\0'));
  const std::string s = " \n\t x";
  EXPECT_EQ(FindNonSpace(s.data(), s.data() + s.size()), s.data() + 4);
}

TEST(JsonScanners, SkipWhitespaceRunCrossesChunks) {
  const std::string text = std::string(100, ' ') + "\n\t{}";
  absl::StatusOr<std::unique_ptr<ByteSource>> source = OpenMemoryByteSource(text);
  ASSERT_TRUE(source.ok());
  ChunkedJsonStream stream(**source, /*chunk_bytes=*/7);
  SkipWhitespaceRun(stream);
  EXPECT_EQ(stream.Peek(), '{');
  EXPECT_EQ(stream.Tell(), 102u);
  SkipWhitespaceRun(stream);  // nothing to skip
  EXPECT_EQ(stream.Tell(), 102u);
}

TEST(JsonScanners, IsAscii) {
  EXPECT_TRUE(IsAscii(""));
  EXPECT_TRUE(IsAscii("plain ascii text of more than eight bytes"));
  EXPECT_FALSE(IsAscii("caf\xc3\xa9"));
  EXPECT_FALSE(IsAscii("eight by\x80"));  // in the tail
  EXPECT_FALSE(
      IsAscii("\xff"
              "and more than 8"));  // in the first word
}

TEST(JsonScanners, BoundedStringBufferKeepsOneByteMoreThanMayBeKept) {
  BoundedStringBuffer buffer;
  for (const char c : std::string("hello")) buffer.Put(c);
  buffer.Put('\0');  // RapidJSON ends every string so
  EXPECT_EQ(buffer.text(), "hello");
  buffer.Clear();
  EXPECT_EQ(buffer.text(), "");
  for (size_t i = 0; i < kMaxKeptStringBytes + 100; ++i) buffer.Put('a');
  buffer.Put('\0');
  // Longer than what may be kept, so the handler cuts (and counts) it; never more memory.
  EXPECT_EQ(buffer.text().size(), kMaxKeptStringBytes + 1);
}

}  // namespace
}  // namespace gpuidle::internal::kineto
