// The inputs around the trace reader: a directory of torch.profiler traces
// (FindProfilerTraces) and a file named .gz that holds no gzip data (NotGzipNote).
#include "ingest/read_trace.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ingest/byte_source.h"
#include "testing/temp_dir.h"

namespace gpuidle::internal {
namespace {

using ::gpuidle::testing::Gzip;
using ::gpuidle::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

constexpr char kTrace[] = R"({"traceEvents": []})";

// Sets a file's modification time to `seconds` after the epoch.
void SetModified(const std::string& path, time_t seconds) {
  const timespec times[2] = {{seconds, 0}, {seconds, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

TEST(FindProfilerTraces, TakesTheNewestTraceOfEachWorker) {
  TempDir dir;
  dir.Write("host_7.1700000000100.pt.trace.json", kTrace);
  dir.Write("host_7.1700000000300.pt.trace.json.gz", Gzip(kTrace));
  dir.Write("host_7.1700000000200.pt.trace.json", kTrace);
  dir.Write("host_8.1700000000050.pt.trace.json", kTrace);
  const absl::StatusOr<ProfilerTraceDirectory> found = FindProfilerTraces(dir.path());
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_THAT(found->taken, ElementsAre(dir.Path("host_7.1700000000300.pt.trace.json.gz"),
                                        dir.Path("host_8.1700000000050.pt.trace.json")));
  EXPECT_THAT(found->skipped, ElementsAre("host_7.1700000000100.pt.trace.json",
                                          "host_7.1700000000200.pt.trace.json"));
  EXPECT_THAT(found->ignored, IsEmpty());
}

// Milliseconds (older PyTorch) and nanoseconds (newer) since the epoch: compared as numbers,
// not as text ("999" < "1000").
TEST(FindProfilerTraces, ComparesTheTimesAsNumbers) {
  TempDir dir;
  dir.Write("w.999.pt.trace.json", kTrace);
  dir.Write("w.1000.pt.trace.json", kTrace);
  dir.Write("w.0998.pt.trace.json", kTrace);
  const absl::StatusOr<ProfilerTraceDirectory> found = FindProfilerTraces(dir.path() + "/");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_THAT(found->taken, ElementsAre(dir.Path("w.1000.pt.trace.json")));
  EXPECT_THAT(found->skipped, ElementsAre("w.0998.pt.trace.json", "w.999.pt.trace.json"));
}

// Worker names hold dots (a host's domain); a name without a time is its own worker, and the
// latest modification decides between its files.
TEST(FindProfilerTraces, SplitsTheWorkerNameAtTheLastDot) {
  TempDir dir;
  SetModified(dir.Write("node1.cluster_5.20.pt.trace.json", kTrace), 1000);
  SetModified(dir.Write("node1.cluster_5.10.pt.trace.json", kTrace), 2000);  // the time decides
  SetModified(dir.Write("custom.pt.trace.json", kTrace), 3000);
  SetModified(dir.Write("custom.pt.trace.json.gz", Gzip(kTrace)), 2000);
  const absl::StatusOr<ProfilerTraceDirectory> found = FindProfilerTraces(dir.path());
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_THAT(found->taken, ElementsAre(dir.Path("custom.pt.trace.json"),
                                        dir.Path("node1.cluster_5.20.pt.trace.json")));
  EXPECT_THAT(found->skipped,
              ElementsAre("custom.pt.trace.json.gz", "node1.cluster_5.10.pt.trace.json"));
}

TEST(FindProfilerTraces, IgnoresWhatIsNoTraceFile) {
  TempDir dir;
  dir.Write("w.1.pt.trace.json", kTrace);
  dir.Write("trace.json", kTrace);
  dir.Write("w.1.pt.trace.json.bak", kTrace);
  ASSERT_TRUE(std::filesystem::create_directory(dir.Path("sub.2.pt.trace.json")));
  ASSERT_EQ(::symlink(dir.Path("w.1.pt.trace.json").c_str(), dir.Path("v.3.pt.trace.json").c_str()),
            0);
  const absl::StatusOr<ProfilerTraceDirectory> found = FindProfilerTraces(dir.path());
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_THAT(found->taken,
              ElementsAre(dir.Path("v.3.pt.trace.json"), dir.Path("w.1.pt.trace.json")));
  EXPECT_THAT(found->ignored,
              ElementsAre("sub.2.pt.trace.json", "trace.json", "w.1.pt.trace.json.bak"));
}

TEST(FindProfilerTraces, NamesADirectoryWithoutTracesAndAMissingOne) {
  TempDir dir;
  dir.Write("trace.json", kTrace);
  absl::StatusOr<ProfilerTraceDirectory> found = FindProfilerTraces(dir.path());
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(found.status().message()),
              StartsWith(dir.path() + " is a directory with no torch.profiler trace in it"));
  EXPECT_THAT(std::string(found.status().message()), HasSubstr("tensorboard_trace_handler"));
  found = FindProfilerTraces(dir.Path("missing"));
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(found.status().message()),
              StartsWith(dir.Path("missing") + ": cannot list"));
}

TEST(NotGzipNote, NamesAGzFileThatHoldsNoGzip) {
  TempDir dir;
  EXPECT_EQ(NotGzipNote(dir.Write("t.json.gz", "\n  {\"traceEvents\": [")),
            dir.Path("t.json.gz") + " is not gzip data (it starts like JSON; rename it to t.json)");
  EXPECT_EQ(NotGzipNote(dir.Write("a.GZ", "\xef\xbb\xbf[1]")),
            dir.Path("a.GZ") + " is not gzip data (it starts like JSON; rename it to a)");
  EXPECT_EQ(NotGzipNote(dir.Write("p.json.gz", "<html><body>Not Found</body></html>")),
            dir.Path("p.json.gz") + " is not gzip data (it starts with \"<html><body>Not \")");
}

TEST(NotGzipNote, SaysNothingOtherwise) {
  TempDir dir;
  EXPECT_EQ(NotGzipNote(dir.Write("real.json.gz", Gzip(kTrace))), "");
  EXPECT_EQ(NotGzipNote(dir.Write("plain.json", kTrace)), "");  // not named .gz
  EXPECT_EQ(NotGzipNote(dir.Write("empty.json.gz", "")), "");   // "is empty" says it
  // "compressed with xz" says it.
  EXPECT_EQ(NotGzipNote(dir.Write("x.json.gz", absl::string_view("\xfd"
                                                                 "7zXZ\0",
                                                                 6))),
            "");
  EXPECT_EQ(NotGzipNote(dir.Path("missing.json.gz")), "");
  const std::string fifo = dir.Path("pipe.json.gz");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(NotGzipNote(fifo), "");  // never opened: a pipe is read once
}

}  // namespace
}  // namespace gpuidle::internal
