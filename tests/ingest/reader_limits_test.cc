// The reader on hostile or strange input (issue 13): bounded strings, numbers, devices and
// times, valid UTF-8, clear messages for what is not UTF-8 JSON, out of memory as an error.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "core/text_safety.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ingest/byte_source.h"
#include "ingest/kineto_reader.h"
#include "ingest/read_trace.h"
#include "model/timeline.h"
#include "testing/temp_dir.h"

namespace gpuidle::internal {
namespace {

using ::gpuidle::testing::Gzip;
using ::gpuidle::testing::TempDir;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using ::testing::StartsWith;

// A kernel event; `name` and `args` are JSON text as written.
std::string Kernel(absl::string_view name, int64_t ts_us,
                   absl::string_view args = R"({"device": 0})", absl::string_view pid = "0") {
  return absl::StrCat(R"({"ph": "X", "cat": "kernel", "name": ")", name, R"(", "pid": )", pid,
                      R"(, "tid": 1, "ts": )", ts_us, R"(, "dur": 1, "args": )", args, "}");
}

std::string Trace(const std::vector<std::string>& events, absl::string_view top = "") {
  return absl::StrCat("{", top, "\"traceEvents\": [", absl::StrJoin(events, ",\n"), "]}");
}

// Reads bytes in memory with the given chunk size (tiny chunks put every token across chunk
// boundaries, where RapidJSON's own parsers take over from the fast scanners).
absl::StatusOr<Timeline> ReadBytes(absl::string_view bytes, size_t chunk = size_t{1} << 20) {
  absl::StatusOr<std::unique_ptr<ByteSource>> source = OpenMemoryByteSource(bytes);
  if (!source.ok()) return source.status();
  return ReadKinetoTrace(**source, chunk);
}

Timeline ReadOk(absl::string_view bytes, size_t chunk = size_t{1} << 20) {
  absl::StatusOr<Timeline> t = ReadBytes(bytes, chunk);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? std::move(t).value() : Timeline();
}

std::string Error(absl::string_view bytes, size_t chunk = size_t{1} << 20) {
  absl::StatusOr<Timeline> t = ReadBytes(bytes, chunk);
  EXPECT_FALSE(t.ok());
  return t.ok() ? "" : std::string(t.status().message());
}

std::string OpName(const Timeline& t, size_t device = 0, size_t op = 0) {
  if (device >= t.devices.size() || op >= t.devices[device].ops.size()) return "<none>";
  return std::string(t.strings.Get(t.devices[device].ops[op].name));
}

// --- strings ---

TEST(ReaderLimits, CutsANameLongerThanTheLimitAtAUtf8BoundaryWithOneCountedWarning) {
  // "é" is two bytes: the cut must not split one.
  std::string long_name;
  while (long_name.size() < kMaxKeptStringBytes + 1000) long_name += "\xc3\xa9";
  const std::string text = Trace({Kernel(long_name, 10), Kernel(long_name, 20)});
  for (size_t chunk : {size_t{1} << 20, size_t{7}, size_t{4096}}) {
    SCOPED_TRACE(chunk);
    const Timeline t = ReadOk(text, chunk);
    const std::string name = OpName(t);
    EXPECT_LE(name.size(), kMaxKeptStringBytes);
    EXPECT_GT(name.size(), kMaxKeptStringBytes - 8);
    EXPECT_THAT(name, AllOf(StartsWith("\xc3\xa9\xc3\xa9"), EndsWith("\xc3\xa9...")));
    EXPECT_TRUE(IsValidUtf8(name));
    EXPECT_THAT(t.info.warnings, ElementsAre("cut 2 names or stacks longer than 65536 bytes to "
                                             "their first 65536 bytes (ending in \"...\")"));
  }
}

TEST(ReaderLimits, CutsAHugeNameWithEscapesAsThePlainOne) {
  // Escapes send the string to RapidJSON's parser, which now writes into a bounded buffer: the
  // name of 3 MiB (more than a chunk) comes out as the same cut name.
  std::string escaped, plain;
  for (int i = 0; i < 600000; ++i) {
    escaped += "ab\\tc";
    plain += "ab\tc";
  }
  const Timeline a = ReadOk(Trace({Kernel(escaped, 10)}));
  const Timeline b = ReadOk(Trace({Kernel(escaped, 10)}), 5);
  EXPECT_EQ(OpName(a), Shorten(plain, kMaxKeptStringBytes));
  EXPECT_EQ(OpName(b), OpName(a));
  EXPECT_THAT(a.info.warnings, SizeIs(1));
}

TEST(ReaderLimits, SkipsAHugeStringInAFieldItDoesNotRead) {
  const std::string junk(5 << 20, 'j');
  const Timeline t = ReadOk(
      Trace({Kernel("k", 10, absl::StrCat(R"({"device": 0, "junk": ")", junk, R"("})"))}), 4096);
  EXPECT_EQ(OpName(t), "k");
  EXPECT_THAT(t.info.warnings, IsEmpty());
}

TEST(ReaderLimits, RefusesANumberLongerThanTheLimit) {
  // A fraction: RapidJSON refuses integers of more than 309 digits itself.
  const std::string digits = "0." + std::string(kMaxNumberBytes + 4096, '7');
  for (size_t chunk : {size_t{1} << 20, size_t{4096}}) {
    EXPECT_THAT(
        Error(Trace({Kernel("k", 10, absl::StrCat(R"({"device": 0, "x": )", digits, "}"))}), chunk),
        HasSubstr("a number longer than 1048576 bytes"));
  }
  // A long number that is still a number is read (as out of range, for a time stamp).
  const Timeline t = ReadOk(Trace(
      {Kernel("k", 10, absl::StrCat(R"({"device": 0, "x": 0.)", std::string(5000, '7'), "}"))}));
  EXPECT_THAT(t.devices, SizeIs(1));
}

TEST(ReaderLimits, ReplacesInvalidUtf8InNamesAndCountsTheBytesInOneWarning) {
  const Timeline t = ReadOk(Trace(
      {Kernel("bad\xff", 10), Kernel("bad\xff", 20), Kernel("cut\xc3", 30),
       // An escaped lone (low) surrogate is no UTF-8 either (RapidJSON writes its three bytes).
       Kernel("lone\\udc00", 40), Kernel("fine \xc3\xa9", 50)},
      "\"deviceProperties\": [{\"id\": 0, \"name\": \"GPU\xfe\"}],"));
  ASSERT_THAT(t.devices, SizeIs(1));
  EXPECT_EQ(OpName(t, 0, 0), "bad\xef\xbf\xbd");
  EXPECT_EQ(OpName(t, 0, 1), "bad\xef\xbf\xbd");
  EXPECT_EQ(OpName(t, 0, 2), "cut\xef\xbf\xbd");
  EXPECT_EQ(OpName(t, 0, 3), "lone\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(OpName(t, 0, 4), "fine \xc3\xa9");
  EXPECT_EQ(t.devices[0].name, "GPU\xef\xbf\xbd");
  EXPECT_THAT(t.info.warnings, ElementsAre("7 invalid UTF-8 bytes in names replaced by U+FFFD"));
  for (size_t i = 0; i < t.strings.size(); ++i) {
    EXPECT_TRUE(IsValidUtf8(t.strings.Get(static_cast<StringId>(i))));
  }
}

TEST(ReaderLimits, QuotesValuesInErrorsShortly) {
  const std::string huge(100000, 'f');
  const std::string format =
      Error(absl::StrCat(R"({"gpuidle": {"format": ")", huge, R"("}, "traceEvents": []})"));
  EXPECT_THAT(format, HasSubstr("unsupported gpuidle trace format"));
  EXPECT_THAT(format, HasSubstr("(100000 bytes)"));
  EXPECT_LT(format.size(), 300u);
  const std::string rank =
      Error(absl::StrCat(R"({"gpuidle": {"format": "gpuidle.trace/2", "rank": )", "0.",
                         std::string(50000, '9'), R"(}, "traceEvents": []})"));
  EXPECT_THAT(rank, HasSubstr("is not an integer in range"));
  EXPECT_LT(rank.size(), 300u);
}

// --- devices ---

TEST(ReaderLimits, NeverMergesADeviceIdBeyondInt32IntoAnother) {
  const Timeline t = ReadOk(Trace({
      Kernel("on0", 10),
      Kernel("big", 20, R"({"device": 4294967296})"),
      Kernel("big_pid", 30, "{}", "4294967296"),
      Kernel("negative_pid", 40, "{}", "-1"),
      Kernel("hex", 50, R"({"device": "0x100000000"})"),
  }));
  ASSERT_THAT(t.devices, SizeIs(1));
  EXPECT_EQ(t.devices[0].device, 0);
  EXPECT_THAT(t.devices[0].ops, SizeIs(1));
  EXPECT_THAT(t.info.warnings,
              ElementsAre("skipped 2 kernel events whose \"pid\" is out of range",
                          "skipped 2 kernel events whose \"args.device\" is out of range (first: "
                          "\"4294967296\")"));
}

TEST(ReaderLimits, ReadsAtMostTheDeviceLimitAndSaysHowMuchItSkipped) {
  std::vector<std::string> events;
  std::vector<std::string> properties;
  const int n = static_cast<int>(kMaxDevicesPerTrace) + 100;
  for (int d = 0; d < n; ++d) {
    events.push_back(Kernel("k", 10 + d, absl::StrCat(R"({"device": )", d, "}")));
    properties.push_back(absl::StrCat(R"({"id": )", d, R"(, "name": "GPU )", d, R"("})"));
  }
  const Timeline t = ReadOk(
      Trace(events, absl::StrCat("\"deviceProperties\": [", absl::StrJoin(properties, ","), "],")));
  ASSERT_THAT(t.devices, SizeIs(kMaxDevicesPerTrace));
  EXPECT_EQ(t.devices.back().device, static_cast<int>(kMaxDevicesPerTrace) - 1);
  EXPECT_EQ(t.devices.back().name, "GPU 1023");
  EXPECT_THAT(t.info.visible_devices, SizeIs(kMaxDevicesPerTrace));
  EXPECT_THAT(t.info.warnings,
              ElementsAre("skipped 100 device events on devices beyond the first 1024 (gpuidle "
                          "reads at most 1024 devices per trace)",
                          "ignored 100 \"deviceProperties\" entries beyond the first 1024"));
}

// --- times ---

TEST(ReaderLimits, DropsEventsFarFromTheRestOfTheTrace) {
  // 120 days after the others: beyond the span of one trace (2^53 ns, 104 days), and dropped
  // rather than stretching the window (and every sum over it) across four months.
  const int64_t far_us = int64_t{120} * 86400 * 1000000;
  const Timeline t = ReadOk(
      Trace({Kernel("a", 10), Kernel("b", 20), Kernel("c", 30), Kernel("far", 10 + far_us)}));
  ASSERT_THAT(t.devices, SizeIs(1));
  ASSERT_THAT(t.devices[0].ops, SizeIs(3));
  EXPECT_EQ(OpName(t, 0, 2), "c");
  EXPECT_THAT(t.info.warnings,
              ElementsAre(HasSubstr("skipped 1 events more than 2^52 ns (52 days) from the median "
                                    "start")));
}

TEST(ReaderLimits, KeepsEveryTimeOfAReadTraceInTheRangeOfTheModel) {
  // The lowest time stamp allowed, and one that ends past the highest: far apart, too.
  const Timeline t = ReadOk(Trace({Kernel("low", -1152921504606846), Kernel("x", 10),
                                   Kernel("y", 20), Kernel("ends_too_late", 8070450532247928)}));
  ASSERT_THAT(t.devices, SizeIs(1));
  EXPECT_THAT(t.devices[0].ops, SizeIs(2));
  EXPECT_EQ(OpName(t, 0, 0), "x");
  EXPECT_THAT(t.info.warnings, ElementsAre("skipped 1 kernel events whose \"dur\" is out of range",
                                           HasSubstr("skipped 1 events more than 2^52 ns")));
  for (const DeviceTimeline& d : t.devices) {
    for (const DeviceOp& op : d.ops) {
      EXPECT_GE(op.start_ns, kMinTimeNs);
      EXPECT_LT(op.end_ns, kMaxTimeNs);
      EXPECT_LE(op.end_ns - op.start_ns, kMaxDurationNs);
    }
  }
}

TEST(ReaderLimits, SaturatesTheCountOfRecordsWithoutTimeStamps) {
  const Timeline t = ReadOk(Trace(
      {Kernel("k", 10), Kernel("zero", 0)},
      R"("gpuidle": {"format": "gpuidle.trace/2", "zero_timestamp_records": 18446744073709551615},)"));
  EXPECT_EQ(t.info.zero_timestamp_records, UINT64_MAX);  // not 0, as a wrapping sum gives
  EXPECT_THAT(t.info.warnings, Contains(HasSubstr("exceeds the largest 64-bit integer")));
}

TEST(ReaderLimits, WarnsAboutABaseTimeItCannotUse) {
  for (const char* base : {"{}", "[1]", "\"soon\"", "99999999999999999999", "1.5"}) {
    SCOPED_TRACE(base);
    const Timeline t =
        ReadOk(Trace({Kernel("k", 10)}, absl::StrCat("\"baseTimeNanoseconds\": ", base, ",")));
    EXPECT_THAT(
        t.info.warnings,
        ElementsAre(HasSubstr("ignored \"baseTimeNanoseconds\": it is not a 64-bit integer")));
    ASSERT_THAT(t.devices, SizeIs(1));
    EXPECT_EQ(t.devices[0].ops[0].start_ns, 10000);
  }
}

// --- what is not UTF-8 JSON ---

TEST(ReaderLimits, SkipsAUtf8ByteOrderMark) {
  const Timeline t = ReadOk(absl::StrCat("\xef\xbb\xbf", Trace({Kernel("k", 10)})));
  EXPECT_EQ(OpName(t), "k");
}

// The text in another encoding, without and with its byte order mark.
std::string Encode(absl::string_view ascii, int width, bool big_endian, bool bom) {
  std::string out;
  const auto put = [&](uint32_t c) {
    for (int i = 0; i < width; ++i) {
      const int shift = 8 * (big_endian ? width - 1 - i : i);
      out.push_back(static_cast<char>((c >> shift) & 0xff));
    }
  };
  if (bom) put(0xfeff);
  for (char c : ascii) put(static_cast<unsigned char>(c));
  return out;
}

TEST(ReaderLimits, NamesUtf16AndUtf32) {
  const std::string text = Trace({Kernel("k", 10)});
  for (bool big_endian : {false, true}) {
    for (bool bom : {false, true}) {
      SCOPED_TRACE(absl::StrCat("big endian ", big_endian, ", byte order mark ", bom));
      EXPECT_THAT(Error(Encode(text, 2, big_endian, bom)),
                  HasSubstr("the text is UTF-16; gpuidle reads JSON in UTF-8"));
      EXPECT_THAT(Error(Encode(text, 4, big_endian, bom)),
                  HasSubstr("the text is UTF-32; gpuidle reads JSON in UTF-8"));
      EXPECT_THAT(Error(Gzip(Encode(text, 2, big_endian, bom))), HasSubstr("UTF-16"));
    }
  }
}

TEST(ReaderLimits, CallsNulBytesNotJson) {
  EXPECT_THAT(Error(std::string(4096, '\0')), HasSubstr("starts with NUL bytes: it is not JSON"));
  EXPECT_THAT(Error(std::string("  \n\0\0\0\0", 8)),
              HasSubstr("a NUL byte where JSON should begin (at byte 3)"));
}

TEST(ReaderLimits, AsksToDecompressOtherCompressionsFirst) {
  const std::string rest = "\x01\x02 and more bytes";
  for (const auto& [magic, name] :
       std::vector<std::pair<std::string, std::string>>{{"BZh9", "bzip2"},
                                                        {std::string("\xfd"
                                                                     "7zXZ\x00",
                                                                     6),
                                                         "xz"},
                                                        {"\x28\xb5\x2f\xfd", "zstd"},
                                                        {"PK\x03\x04", "zip"},
                                                        {"\x04\x22\x4d\x18", "lz4"}}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(Error(magic + rest),
              absl::StrCat("the input is compressed with ", name,
                           "; gpuidle reads plain or gzip JSON: decompress it first (",
                           name == "zip" ? "unzip" : absl::StrCat(name, " -d"), ")"));
    TempDir dir;
    const std::string path = dir.Write("t.json.x", magic + rest);
    absl::StatusOr<Timeline> t = ReadTraceFile(path);
    ASSERT_FALSE(t.ok());
    EXPECT_THAT(std::string(t.status().message()),
                StartsWith(absl::StrCat(path, " is compressed with ", name)));
  }
}

TEST(ReaderLimits, RefusesDevicesThatMayNeverEnd) {
  for (const char* device : {"/dev/zero", "/dev/urandom", "/dev/null"}) {
    absl::StatusOr<Timeline> t = ReadTraceFile(device);
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(t.status().message(),
              absl::StrCat(device,
                           " is a character device, not a trace file (gpuidle reads regular files "
                           "and pipes)"));
  }
}

TEST(ReaderLimits, ReadsAPipe) {
  // As from `gpuidle analyze <(zcat trace.json.gz)`.
  TempDir dir;
  const std::string fifo = dir.Path("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string text = Trace({Kernel("through_a_pipe", 10)});
  std::thread writer([&] {
    std::ofstream out(fifo, std::ios::binary);
    out << text;
  });
  absl::StatusOr<Timeline> t = ReadTraceFile(fifo);
  writer.join();
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(OpName(*t), "through_a_pipe");
}

TEST(ReaderLimits, ReadsGzipInMemoryAsFromAFile) {
  const std::string text = Trace({Kernel("k", 10)});
  EXPECT_EQ(OpName(ReadOk(Gzip(text))), "k");
  EXPECT_THAT(Error(""), HasSubstr("the input is empty"));
}

// --- memory ---

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define GPUIDLE_TEST_UNDER_SANITIZER 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GPUIDLE_TEST_UNDER_SANITIZER 1
#endif

// An endless trace of kernels, each with a distinct name of 60 KB: memory grows with what the
// reader keeps, until it runs out.
class EndlessTrace : public ByteSource {
 public:
  absl::StatusOr<size_t> Read(char* buffer, size_t n) override {
    while (pending_.size() - pos_ < n) {
      pending_.erase(0, pos_);
      pos_ = 0;
      if (events_ == 0) {
        pending_ += "{\"traceEvents\": [";
      } else {
        pending_ += ",";
      }
      absl::StrAppend(&pending_, Kernel(absl::StrCat(events_, std::string(60000, 'n')),
                                        10 + static_cast<int64_t>(events_)));
      ++events_;
    }
    std::memcpy(buffer, pending_.data() + pos_, n);
    pos_ += n;
    bytes_ += n;
    return n;
  }
  uint64_t file_bytes_read() const override { return bytes_; }

 private:
  std::string pending_;
  size_t pos_ = 0;
  uint64_t events_ = 0;
  uint64_t bytes_ = 0;
};

TEST(ReaderLimits, RunningOutOfMemoryIsAnErrorNotAnAbort) {
#ifdef GPUIDLE_TEST_UNDER_SANITIZER
  GTEST_SKIP() << "sanitizers reserve more address space than any limit this test sets";
#else
  // In a child: the address-space limit must not reach the test runner.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    struct rlimit limit {};
    ::getrlimit(RLIMIT_AS, &limit);
    // What the process maps now, plus 256 MiB.
    size_t mapped = 0;
    std::ifstream statm("/proc/self/statm");
    statm >> mapped;
    const rlim_t bytes =
        static_cast<rlim_t>(mapped) * static_cast<rlim_t>(::getpagesize()) + (rlim_t{256} << 20);
    limit.rlim_cur = bytes;
    if (::setrlimit(RLIMIT_AS, &limit) != 0) ::_exit(10);
    EndlessTrace source;
    absl::StatusOr<Timeline> t = ReadKinetoTrace(source);
    if (t.ok()) ::_exit(11);
    if (t.status().code() != absl::StatusCode::kResourceExhausted) ::_exit(12);
    if (!absl::StrContains(t.status().message(), "out of memory while reading")) ::_exit(13);
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the reader died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "10: setrlimit failed, 11: read the endless trace, 12: another error code, 13: "
         "another message";
#endif
}

}  // namespace
}  // namespace gpuidle::internal
