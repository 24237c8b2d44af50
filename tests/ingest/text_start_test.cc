// The start of the text, before the JSON parser: what is not UTF-8 JSON, and the bytes read to
// tell handed back in front of the rest.
#include "ingest/text_start.h"

#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuidle::internal::kineto {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

TextStart StartOf(const std::string& bytes) {
  absl::StatusOr<std::unique_ptr<ByteSource>> source = OpenMemoryByteSource(bytes);
  EXPECT_TRUE(source.ok());
  absl::StatusOr<TextStart> start = ReadTextStart(**source);
  EXPECT_TRUE(start.ok());
  return *start;
}

std::string Problem(const std::string& bytes) { return NotUtf8Json(StartOf(bytes)); }

TEST(TextStart, ReadsUpToFourBytes) {
  EXPECT_EQ(StartOf("{\"traceEvents\": []}").str(), "{\"tr");
  EXPECT_EQ(StartOf("[]").str(), "[]");
  EXPECT_EQ(StartOf("[]").at(1), ']');
  EXPECT_EQ(StartOf("[]").at(2), -1);
}

TEST(TextStart, Utf8JsonIsNoProblem) {
  EXPECT_THAT(Problem("{\"traceEvents\": []}"), IsEmpty());
  EXPECT_THAT(Problem("\xef\xbb\xbf{}"), IsEmpty());  // a UTF-8 byte order mark
  EXPECT_THAT(Problem(" "), IsEmpty());
}

TEST(TextStart, NamesUtf16AndUtf32) {
  EXPECT_THAT(Problem(std::string("\xff\xfe{\0", 4)), HasSubstr("UTF-16"));
  EXPECT_THAT(Problem(std::string("\xfe\xff\0{", 4)), HasSubstr("UTF-16"));
  EXPECT_THAT(Problem(std::string("{\0\"\0", 4)), HasSubstr("iconv -f UTF-16 -t UTF-8"));
  EXPECT_THAT(Problem(std::string("\xff\xfe\0\0", 4)), HasSubstr("UTF-32"));
  EXPECT_THAT(Problem(std::string("\0\0\0{", 4)), HasSubstr("UTF-32"));
  EXPECT_THAT(Problem(std::string("\0\0\0\0", 4)), HasSubstr("starts with NUL bytes"));
}

TEST(TextStart, PrefixedSourceGivesThePrefixThenTheRest) {
  absl::StatusOr<std::unique_ptr<ByteSource>> inner = OpenMemoryByteSource("rest of it");
  ASSERT_TRUE(inner.ok());
  PrefixedSource source(**inner, "the ");
  std::string all;
  char buffer[3];
  for (;;) {
    absl::StatusOr<size_t> got = source.Read(buffer, sizeof(buffer));
    ASSERT_TRUE(got.ok());
    if (*got == 0) break;
    all.append(buffer, *got);
  }
  EXPECT_EQ(all, "the rest of it");
  EXPECT_FALSE(source.compressed());
}

TEST(TextStart, DrainingAPlainSourceReadsNothing) {
  absl::StatusOr<std::unique_ptr<ByteSource>> source = OpenMemoryByteSource("abc");
  ASSERT_TRUE(source.ok());
  EXPECT_TRUE(DrainCompressed(**source).ok());
  char c;
  EXPECT_EQ(*(*source)->Read(&c, 1), 1u);  // still unread
}

}  // namespace
}  // namespace gpuidle::internal::kineto
