// The C++ API on a machine without a GPU (CI): gpuidle must refuse cleanly, say so once, and
// never disturb the program; the tests of the refusal skip on a GPU host. (Collection itself
// is proven on the GPU: tests/gpu.)
#include "gpuidle/profiler.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_split.h"
#include "collect/host_ranges.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/gpu_host.h"
#include "testing/temp_dir.h"

namespace gpuidle {
namespace {

using ::gpuidle::testing::HostHasNvidiaGpu;
using ::gpuidle::testing::kSkippedOnAGpuHost;
using ::gpuidle::testing::ReadFileOrDie;
using ::gpuidle::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;
using ::testing::StartsWith;

// Collects what the code under test writes to stderr (fd 2, where gpuidle warns).
class StderrCapture {
 public:
  explicit StderrCapture(const TempDir& dir) : path_(dir.Path("stderr")) {
    fflush(stderr);
    saved_ = dup(STDERR_FILENO);
    const int fd = open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDERR_FILENO);
    close(fd);
  }
  std::string Finish() {
    fflush(stderr);
    dup2(saved_, STDERR_FILENO);
    close(saved_);
    return ReadFileOrDie(path_);
  }

 private:
  std::string path_;
  int saved_ = -1;
};

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

TEST(ProfilerTest, StartWithoutAGpuFailsWithOneWarningLine) {
  if (HostHasNvidiaGpu()) GTEST_SKIP() << kSkippedOnAGpuHost;
  TempDir dir;
  StderrCapture capture(dir);
  Profiler profiler{ProfilerOptions{}};
  const absl::Status status = profiler.Start();
  const std::string err = capture.Finish();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_FALSE(profiler.collecting());
  ASSERT_THAT(Lines(err), SizeIs(1)) << err;
  EXPECT_THAT(err, HasSubstr("gpuidle: warning: "));
  EXPECT_THAT(err, HasSubstr("the program runs as usual"));
}

TEST(ProfilerTest, StopWithoutStartIsAnErrorNotACrash) {
  Profiler profiler{ProfilerOptions{}};
  EXPECT_EQ(profiler.Stop().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(profiler.StopAtExit().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(profiler.report(), nullptr);
  EXPECT_EQ(profiler.FormatReport("text").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(profiler.SaveTrace("/tmp/never.json").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(profiler.written_report_path(), IsEmpty());
}

TEST(ProfilerTest, ABadEnvironmentVariableNamesItselfAtStart) {
  setenv("GPUIDLE_MAX_RECORDS", "banana", 1);
  Profiler profiler;
  unsetenv("GPUIDLE_MAX_RECORDS");
  TempDir dir;
  StderrCapture capture(dir);
  const absl::Status status = profiler.Start();
  const std::string err = capture.Finish();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("GPUIDLE_MAX_RECORDS"));
  EXPECT_THAT(Lines(err), SizeIs(1)) << err;
}

// The scope's end stops only what started: an inert profiler writes none of its configured
// outputs and prints no summary. (Its warning is said once per process: an earlier test in
// this process may have said it.)
TEST(ProfilerTest, ScopedProfileWithoutAGpuWarnsOnceAndWritesNothing) {
  if (HostHasNvidiaGpu()) GTEST_SKIP() << kSkippedOnAGpuHost;
  TempDir dir;
  ProfilerOptions options;
  options.report_path = dir.Path("report.json");
  options.trace_path = dir.Path("trace.json");
  options.print_summary = true;
  StderrCapture capture(dir);
  {
    ScopedProfile scope{options};
    EXPECT_FALSE(scope.profiler().collecting());
    StepMarker step;
  }
  const std::string err = capture.Finish();
  EXPECT_LE(Lines(err).size(), 1u) << err;
  for (const std::string& line : Lines(err)) EXPECT_THAT(line, StartsWith("gpuidle: warning: "));
  EXPECT_THAT(err, Not(HasSubstr("why the GPU was idle")));
  EXPECT_THAT(dir.List(), ElementsAre("stderr"));
}

TEST(ProfilerTest, MarkersLeaveNothingBehindWhenNothingCollects) {
  internal::HostRangeRecorder& recorder = internal::HostRangeRecorder::Get();
  ASSERT_FALSE(recorder.recording());
  for (int step = 0; step < 3; ++step) {
    StepMarker s;
    { DataRange d; }
    UserRange u("forward");
    PushMarker(MarkerKind::kUser, "nested");
    PopMarker();
  }
  PopMarker();  // unbalanced: ignored
  internal::Timeline timeline;
  recorder.MoveInto(&timeline);
  EXPECT_THAT(timeline.ranges, IsEmpty());

  // The stacks stayed balanced: a marker made while recording comes out whole (a build without
  // the collector has no NVTX: its markers are no-ops).
  if (!::gpuidle::testing::BuildCanCollect()) return;
  recorder.SetRecording(true);
  { DataRange d; }
  recorder.SetRecording(false);
  recorder.MoveInto(&timeline);
  ASSERT_THAT(timeline.ranges, SizeIs(1));
  EXPECT_EQ(timeline.ranges[0].kind, internal::RangeKind::kData);
  EXPECT_EQ(timeline.strings.Get(timeline.ranges[0].name), "gpuidle.data");
}

TEST(ProfilerTest, RequestsCostNoBookkeepingAndLeaveNothingBehindWhenNothingCollects) {
  internal::HostRangeRecorder& recorder = internal::HostRangeRecorder::Get();
  ASSERT_FALSE(recorder.recording());
  for (int i = 0; i < 3; ++i) {
    RequestRange request("idle");
    request.Running();
    request.Running();
  }
  // No handle: nothing is kept for a request that nobody would see, so none can pile up.
  const uint64_t handle = StartRequest("never ended");
  EXPECT_EQ(handle, 0u);
  RequestRunning(handle);
  EndRequest(handle);
  EndRequest(12345);
  internal::Timeline timeline;
  recorder.MoveInto(&timeline);
  EXPECT_THAT(timeline.ranges, IsEmpty());

  // A request made while recording comes out whole (a build without the collector has no NVTX).
  if (!::gpuidle::testing::BuildCanCollect()) return;
  recorder.SetRecording(true);
  {
    RequestRange request;
    request.Running();
  }
  recorder.SetRecording(false);
  recorder.MoveInto(&timeline);
  ASSERT_THAT(timeline.ranges, SizeIs(2));
  timeline.Finalize();
  EXPECT_EQ(timeline.ranges[0].kind, internal::RangeKind::kRequest);
  EXPECT_EQ(timeline.strings.Get(timeline.ranges[0].name), "gpuidle.request");
  EXPECT_EQ(timeline.ranges[1].kind, internal::RangeKind::kRequestRun);
  EXPECT_EQ(timeline.strings.Get(timeline.ranges[1].name), "gpuidle.request_run");
}

}  // namespace
}  // namespace gpuidle
