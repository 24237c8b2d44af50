#include "ingest/byte_source.h"

#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/temp_dir.h"

namespace gpuidle::internal {
namespace {

using ::gpuidle::testing::Gzip;
using ::gpuidle::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Everything the source yields, reading chunk bytes at a time.
absl::StatusOr<std::string> ReadAll(ByteSource& source, size_t chunk) {
  std::string out;
  std::string buffer(chunk, '\0');
  for (;;) {
    absl::StatusOr<size_t> got = source.Read(buffer.data(), chunk);
    if (!got.ok()) return got.status();
    if (*got == 0) return out;
    EXPECT_LE(*got, chunk);
    out.append(buffer.data(), *got);
  }
}

absl::StatusOr<std::string> OpenAndReadAll(const std::string& path, size_t chunk = 4096) {
  absl::StatusOr<std::unique_ptr<ByteSource>> source = OpenByteSource(path);
  if (!source.ok()) return source.status();
  return ReadAll(**source, chunk);
}

// Bytes that deflate cannot shrink much, so that files span several 1 MiB input chunks.
std::string Noise(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  uint32_t x = seed;
  for (char& c : s) {
    x = x * 1664525u + 1013904223u;
    c = static_cast<char>(x >> 24);
  }
  return s;
}

TEST(OpenByteSource, ReadsAPlainFileExactly) {
  TempDir dir;
  const std::string text = R"({"traceEvents": []})";
  const std::string path = dir.Write("trace.json", text);
  EXPECT_EQ(OpenAndReadAll(path, 1).value(), text);
  EXPECT_EQ(OpenAndReadAll(path, 3).value(), text);
  EXPECT_EQ(OpenAndReadAll(path, 1 << 20).value(), text);
}

TEST(OpenByteSource, ReadsFilesShorterThanTheGzipMagic) {
  TempDir dir;
  EXPECT_EQ(OpenAndReadAll(dir.Write("one", "7")).value(), "7");
  EXPECT_EQ(OpenAndReadAll(dir.Write("half_magic", "\x1f")).value(), "\x1f");
}

TEST(OpenByteSource, CountsTheFileBytesItHasRead) {
  TempDir dir;
  const std::string path = dir.Write("trace.json", "0123456789");
  std::unique_ptr<ByteSource> source = OpenByteSource(path).value();
  char buffer[4];
  ASSERT_EQ(source->Read(buffer, 4).value(), 4u);  // the sniffed magic bytes first (6)
  EXPECT_EQ(source->file_bytes_read(), 4u);
  ASSERT_EQ(source->Read(buffer, 4).value(), 2u);
  EXPECT_EQ(source->file_bytes_read(), 6u);
  EXPECT_EQ(ReadAll(*source, 4).value(), "6789");
  EXPECT_EQ(source->file_bytes_read(), 10u);
}

TEST(OpenByteSource, InflatesGzipRecognisedByContentNotByName) {
  TempDir dir;
  const std::string text = R"({"traceEvents": [{"ph": "X"}]})";
  const std::string gz = Gzip(text);
  EXPECT_EQ(OpenAndReadAll(dir.Write("trace.json", gz)).value(), text);
  EXPECT_EQ(OpenAndReadAll(dir.Write("trace.json.gz", gz), 1).value(), text);
  // A plain file named .gz is read as it is.
  EXPECT_EQ(OpenAndReadAll(dir.Write("plain.json.gz", text)).value(), text);
}

TEST(OpenByteSource, CountsCompressedBytesForGzip) {
  TempDir dir;
  const std::string gz = Gzip(std::string(100000, 'a'));
  const std::string path = dir.Write("trace.json.gz", gz);
  std::unique_ptr<ByteSource> source = OpenByteSource(path).value();
  ASSERT_EQ(ReadAll(*source, 4096).value(), std::string(100000, 'a'));
  EXPECT_EQ(source->file_bytes_read(), gz.size());
}

TEST(OpenByteSource, InflatesLargeGzipAcrossInputChunks) {
  TempDir dir;
  const std::string text = Noise(3 << 20, 1);
  const std::string path = dir.Write("big.gz", Gzip(text));
  const absl::StatusOr<std::string> got = OpenAndReadAll(path, 65536);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(*got == text);
}

TEST(OpenByteSource, ReadsConcatenatedGzipMembersAsOneStream) {
  TempDir dir;
  const std::string path =
      dir.Write("multi.gz", Gzip("first member, ") + Gzip("") + Gzip("second member"));
  EXPECT_EQ(OpenAndReadAll(path).value(), "first member, second member");
  EXPECT_EQ(OpenAndReadAll(path, 1).value(), "first member, second member");
}

TEST(OpenByteSource, ReadsGzipMembersThatCrossInputChunks) {
  TempDir dir;
  const std::string a = Noise(1500000, 2);
  const std::string b = Noise(900000, 3);
  const std::string path = dir.Write("multi.gz", Gzip(a) + Gzip(b));
  const absl::StatusOr<std::string> got = OpenAndReadAll(path, 100000);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(*got == a + b);
}

TEST(OpenByteSource, ReturnsNothingForAZeroByteRead) {
  TempDir dir;
  const std::string gz_path = dir.Write("t.gz", Gzip("abc"));
  std::unique_ptr<ByteSource> gz = OpenByteSource(gz_path).value();
  char c = 0;
  EXPECT_EQ(gz->Read(&c, 0).value(), 0u);
  EXPECT_EQ(ReadAll(*gz, 2).value(), "abc");
}

TEST(OpenByteSource, ReportsTruncatedGzip) {
  TempDir dir;
  const std::string gz = Gzip(Noise(200000, 4));
  for (size_t keep : {size_t{2}, size_t{10}, gz.size() / 2, gz.size() - 4, gz.size() - 1}) {
    const std::string path = dir.Write("cut.gz", gz.substr(0, keep));
    const absl::StatusOr<std::string> got = OpenAndReadAll(path);
    ASSERT_FALSE(got.ok()) << "kept " << keep << " bytes";
    EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_THAT(std::string(got.status().message()), HasSubstr("truncated gzip"))
        << "kept " << keep << " bytes";
  }
}

TEST(OpenByteSource, ReportsCorruptGzip) {
  TempDir dir;
  std::string gz = Gzip(Noise(200000, 5) + std::string(100000, 'z'));
  for (size_t i = gz.size() / 2; i < gz.size() / 2 + 8; ++i) gz[i] = static_cast<char>(~gz[i]);
  const absl::StatusOr<std::string> got = OpenAndReadAll(dir.Write("bad.gz", gz));
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("corrupt gzip"));
}

TEST(OpenByteSource, ReportsABadGzipChecksum) {
  TempDir dir;
  std::string gz = Gzip("{\"traceEvents\": []}");
  gz[gz.size() - 8] = static_cast<char>(gz[gz.size() - 8] ^ 1);  // the CRC-32 in the trailer
  const absl::StatusOr<std::string> got = OpenAndReadAll(dir.Write("crc.gz", gz));
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("corrupt gzip"));
}

TEST(OpenByteSource, ReportsAMissingFileAsNotFound) {
  TempDir dir;
  const std::string path = dir.Path("missing.json");
  const absl::StatusOr<std::unique_ptr<ByteSource>> source = OpenByteSource(path);
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(source.status().message()), StartsWith(path));
  EXPECT_THAT(std::string(source.status().message()), HasSubstr("No such file"));
}

TEST(OpenByteSource, RejectsADirectory) {
  TempDir dir;
  const absl::StatusOr<std::unique_ptr<ByteSource>> source = OpenByteSource(dir.path());
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(source.status().message()), StartsWith(dir.path()));
  EXPECT_THAT(std::string(source.status().message()), HasSubstr("is a directory"));
}

TEST(OpenByteSource, RejectsAnEmptyFile) {
  TempDir dir;
  const std::string path = dir.Write("empty.json", "");
  const absl::StatusOr<std::unique_ptr<ByteSource>> source = OpenByteSource(path);
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(source.status().message()), StartsWith(path));
  EXPECT_THAT(std::string(source.status().message()), HasSubstr("empty"));
}

TEST(OpenByteSource, ReportsAnUnreadableFileAsPermissionDenied) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads any file";
  TempDir dir;
  const std::string path = dir.Write("secret.json", "{}");
  ASSERT_EQ(::chmod(path.c_str(), 0), 0);
  const absl::StatusOr<std::unique_ptr<ByteSource>> source = OpenByteSource(path);
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(source.status().message()), StartsWith(path));
}

// ReadAhead: the same bytes, end and errors as the source it wraps, in the same order.

absl::StatusOr<std::unique_ptr<ByteSource>> OpenAhead(const std::string& path, size_t chunk) {
  absl::StatusOr<std::unique_ptr<ByteSource>> source = OpenByteSource(path);
  if (!source.ok()) return source.status();
  return ReadAhead(*std::move(source), chunk);
}

TEST(ReadAhead, GivesTheSameBytesAsTheSourceItWraps) {
  TempDir dir;
  // Several of ReadAhead's chunks and of the gzip source's 1 MiB input chunks; each chunk of
  // the ring is a hand-over between threads, so the small ring chunks get a small input.
  const std::string text = Noise(3 * 1000 * 1000 + 17, 7);
  const std::string plain = dir.Write("plain.bin", text);
  const std::string gz = dir.Write("data.gz", Gzip(text));
  const std::string small = text.substr(0, 5000);
  const std::string small_path = dir.Write("small.bin", small);
  for (size_t ahead_chunk : {1, 3, 1000}) {
    absl::StatusOr<std::unique_ptr<ByteSource>> source = OpenAhead(small_path, ahead_chunk);
    ASSERT_TRUE(source.ok());
    EXPECT_TRUE(ReadAll(**source, 7).value() == small) << ahead_chunk;
  }
  for (const std::string& path : {plain, gz}) {
    for (size_t ahead_chunk : {4096, 1 << 20}) {
      for (size_t read_chunk : {7, 4096, 3 << 20}) {
        SCOPED_TRACE(::testing::Message() << path << " " << ahead_chunk << " " << read_chunk);
        absl::StatusOr<std::unique_ptr<ByteSource>> source = OpenAhead(path, ahead_chunk);
        ASSERT_TRUE(source.ok());
        absl::StatusOr<std::string> all = ReadAll(**source, read_chunk);
        ASSERT_TRUE(all.ok()) << all.status();
        EXPECT_TRUE(*all == text);
        // The end stays the end.
        char c;
        EXPECT_EQ((*source)->Read(&c, 1).value(), 0u);
      }
    }
  }
}

TEST(ReadAhead, DeliversTheDataBeforeAnErrorAndThenTheError) {
  TempDir dir;
  const std::string text = Noise(2 * 1000 * 1000, 3);
  std::string gz = Gzip(text);
  gz.resize(gz.size() / 2);  // truncated
  const std::string path = dir.Write("cut.gz", gz);
  absl::StatusOr<std::string> direct = OpenAndReadAll(path);
  ASSERT_FALSE(direct.ok());

  absl::StatusOr<std::unique_ptr<ByteSource>> source = OpenAhead(path, 1 << 16);
  ASSERT_TRUE(source.ok());
  std::string got;
  std::string buffer(4096, '\0');
  absl::Status error;
  for (;;) {
    absl::StatusOr<size_t> n = (*source)->Read(buffer.data(), buffer.size());
    if (!n.ok()) {
      error = n.status();
      break;
    }
    ASSERT_NE(*n, 0u) << "ended without the error";
    got.append(buffer.data(), *n);
  }
  EXPECT_EQ(error, direct.status());
  EXPECT_GT(got.size(), 0u);
  EXPECT_TRUE(text.compare(0, got.size(), got) == 0) << "the data before the error differs";
  EXPECT_TRUE((*source)->compressed());
  char c;
  EXPECT_EQ((*source)->Read(&c, 1).status(), direct.status());  // and stays an error
}

TEST(ReadAhead, CanBeDestroyedBeforeTheEndWithoutHanging) {
  TempDir dir;
  const std::string path = dir.Write("big.bin", Noise(5 * 1000 * 1000, 11));
  for (int i = 0; i < 20; ++i) {
    absl::StatusOr<std::unique_ptr<ByteSource>> source = OpenAhead(path, 4096);
    ASSERT_TRUE(source.ok());
    if (i % 2 == 1) {
      char buffer[100];
      ASSERT_TRUE((*source)->Read(buffer, sizeof(buffer)).ok());
    }
  }  // each source is destroyed while its worker has more to read
}

}  // namespace
}  // namespace gpuidle::internal
