// libgpuidle.so loaded into programs that do not know it, on a machine without a GPU (CI): the
// program's output and exit status must not change; gpuidle adds one warning line at most.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/gpu_host.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"

namespace gpuidle::internal {
namespace {

using ::gpuidle::testing::HostHasNvidiaGpu;
using ::gpuidle::testing::kSkippedOnAGpuHost;
using ::gpuidle::testing::ProcessResult;
using ::gpuidle::testing::RunProcess;
using ::gpuidle::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

const std::string kLibrary = GPUIDLE_SHARED_LIBRARY_PATH;

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

// What a program prints and returns without gpuidle and with LD_PRELOAD=libgpuidle.so.
struct Comparison {
  ProcessResult plain;
  ProcessResult preloaded;
};

Comparison RunBothWays(const std::vector<std::string>& argv,
                       std::map<std::string, std::string> env = {}) {
  TempDir plain_dir, preload_dir;
  Comparison c;
  c.plain = RunProcess(plain_dir, argv, env);
  env["LD_PRELOAD"] = kLibrary;
  c.preloaded = RunProcess(preload_dir, argv, env);
  return c;
}

TEST(PreloadTest, EchoPrintsTheSameAndGpuidleAddsOneWarningLine) {
  if (HostHasNvidiaGpu()) GTEST_SKIP() << kSkippedOnAGpuHost;
  const Comparison c = RunBothWays({"/bin/echo", "hello", "world"});
  EXPECT_EQ(c.preloaded.code, 0);
  EXPECT_EQ(c.preloaded.out, c.plain.out);
  EXPECT_EQ(c.preloaded.out, "hello world\n");
  ASSERT_THAT(Lines(c.preloaded.err), SizeIs(1)) << c.preloaded.err;
  EXPECT_THAT(c.preloaded.err, HasSubstr("gpuidle: warning: no NVIDIA GPU"));
  EXPECT_THAT(c.preloaded.err, HasSubstr("the program runs as usual"));
  EXPECT_THAT(c.plain.err, IsEmpty());
}

TEST(PreloadTest, PythonKeepsItsOutputAndExitStatus) {
  if (HostHasNvidiaGpu()) GTEST_SKIP() << kSkippedOnAGpuHost;
  const std::vector<std::string> argv = {
      "python3", "-c",
      "import sys; print('out', 6 * 7); print('err', file=sys.stderr); sys.exit(5)"};
  const Comparison c = RunBothWays(argv);
  EXPECT_EQ(c.plain.code, 5);
  EXPECT_EQ(c.preloaded.code, 5);
  EXPECT_EQ(c.preloaded.out, "out 42\n");
  const std::vector<std::string> err = Lines(c.preloaded.err);
  ASSERT_THAT(err, SizeIs(2)) << c.preloaded.err;
  EXPECT_THAT(err[0], HasSubstr("gpuidle: warning:"));
  EXPECT_EQ(err[1], "err");
}

TEST(PreloadTest, AShellScriptWarnsOnceForAllTheCommandsItRuns) {
  if (HostHasNvidiaGpu()) GTEST_SKIP() << kSkippedOnAGpuHost;
  const Comparison c = RunBothWays({"/bin/sh", "-c", "/bin/echo a; /bin/echo b; /bin/true"});
  EXPECT_EQ(c.preloaded.out, "a\nb\n");
  EXPECT_THAT(Lines(c.preloaded.err), SizeIs(1)) << c.preloaded.err;
}

TEST(PreloadTest, GpuidleDisableSilencesIt) {
  const Comparison c = RunBothWays({"/bin/echo", "quiet"}, {{"GPUIDLE_DISABLE", "1"}});
  EXPECT_EQ(c.preloaded.out, "quiet\n");
  EXPECT_THAT(c.preloaded.err, IsEmpty());
}

TEST(PreloadTest, AFailingProgramKeepsItsExitStatusAndError) {
  const Comparison c = RunBothWays({"/bin/ls", "/no/such/directory"});
  EXPECT_NE(c.plain.code, 0);
  EXPECT_EQ(c.preloaded.code, c.plain.code);
  EXPECT_THAT(c.preloaded.err, HasSubstr(c.plain.err));
}

}  // namespace
}  // namespace gpuidle::internal
