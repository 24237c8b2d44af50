// `gpuidle run`, tested through the real binary: exit statuses, signals and the environment the
// command sees are properties of processes. (No GPU here: the CUDA driver would load
// CUDA_INJECTION64_PATH only at cuInit, so the tests check what the command is given.)
#include "cli/run_command.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cli/cli.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/gpu_host.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"

namespace gpuidle::internal {
namespace {

using ::gpuidle::testing::BuildCanCollect;
using ::gpuidle::testing::HostHasNvidiaGpu;
using ::gpuidle::testing::kSkippedOnAGpuHost;
using ::gpuidle::testing::kSkippedWithoutCollector;
using ::gpuidle::testing::ReadFileOrDie;
using ::gpuidle::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

const std::string kCli = GPUIDLE_CLI_PATH;

using Process = ::gpuidle::testing::ProcessResult;

struct Launch {
  Launch(std::vector<std::string> a, std::map<std::string, std::string> e = {},
         std::string b = kCli)
      : args(std::move(a)), env(std::move(e)), binary(std::move(b)) {}

  std::vector<std::string> args;           // after the binary's name
  std::map<std::string, std::string> env;  // added to a clean environment
  std::string binary;
  std::string cwd;  // "" = the test's
  std::string stdin_path = "/dev/null";
};

// Starts gpuidle (testing/subprocess.h: clean environment, output to files in dir, the signal
// dispositions of a shell's foreground job).
pid_t Start(const TempDir& dir, const Launch& launch) {
  ::gpuidle::testing::ProcessLaunch p;
  p.argv = {launch.binary};
  p.argv.insert(p.argv.end(), launch.args.begin(), launch.args.end());
  p.env = launch.env;
  // This machine may have no GPU; the tests that want run's no-GPU warning set it to "".
  p.env.emplace("GPUIDLE_WARNED", "1");
  p.cwd = launch.cwd;
  p.stdin_path = launch.stdin_path;
  return ::gpuidle::testing::StartProcess(dir, p);
}

Process Finish(const TempDir& dir, pid_t pid) {
  return ::gpuidle::testing::FinishProcess(dir, pid);
}

Process RunGpuidle(const TempDir& dir, const Launch& launch) {
  return Finish(dir, Start(dir, launch));
}

// A stand-in for the injection library: run checks only that it is a file with an ELF header
// (the commands of these tests load no CUDA).
std::string FakeLibrary(const TempDir& dir) {
  return dir.Write("libgpuidle_fake.so",
                   "\x7f"
                   "ELF fake");
}

// Runs `gpuidle run ARGS` with the fake library.
Process RunWith(const TempDir& dir, std::vector<std::string> args,
                std::map<std::string, std::string> env = {}) {
  args.insert(args.begin(), "run");
  env.emplace("GPUIDLE_LIBRARY", FakeLibrary(dir));
  return RunGpuidle(dir, Launch{args, env});
}

bool Exists(const std::string& path) { return std::filesystem::exists(path); }

// Waits until path exists (the child is running); false after 10 s.
bool WaitFor(const std::string& path) {
  for (int i = 0; i < 1000; ++i) {
    if (Exists(path)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// --- exit status ---

TEST(GpuidleRun, ExitsWithTheCommandsExitCode) {
  TempDir dir;
  for (int code : {0, 1, 7, 42, 255}) {
    const Process p = RunWith(dir, {"--", "sh", "-c", absl::StrCat("exit ", code)});
    EXPECT_EQ(p.code, code);
    EXPECT_EQ(p.err, "");
  }
}

TEST(GpuidleRun, ExitsWith128PlusTheSignalThatKilledTheCommand) {
  TempDir dir;
  Process p = RunWith(dir, {"--", "sh", "-c", "kill -9 $$"});
  EXPECT_EQ(p.code, 128 + 9);
  p = RunWith(dir, {"--", "sh", "-c", "kill -TERM $$"});
  EXPECT_EQ(p.code, 128 + 15);
}

// gpuidle ignores ^C itself, but the command must still die of it.
TEST(GpuidleRun, LeavesTheInterruptSignalToTheCommand) {
  TempDir dir;
  const Process p = RunWith(dir, {"--", "sh", "-c", "kill -INT $$; exit 0"});
  EXPECT_EQ(p.code, 128 + SIGINT);
}

// --- standard streams ---

// Without a GPU the driver never loads gpuidle; run says so once instead of ending silently,
// and tells the command's own children (GPUIDLE_WARNED) not to repeat it.
TEST(GpuidleRun, WarnsOnceWithoutAGpuAndStillRunsTheCommand) {
  if (HostHasNvidiaGpu()) GTEST_SKIP() << kSkippedOnAGpuHost;
  if (!BuildCanCollect()) GTEST_SKIP() << kSkippedWithoutCollector;
  TempDir dir;
  const Process p =
      RunWith(dir, {"--", "sh", "-c", "echo \"warned=$GPUIDLE_WARNED\""}, {{"GPUIDLE_WARNED", ""}});
  EXPECT_EQ(p.code, 0);
  EXPECT_EQ(p.out, "warned=1\n");
  EXPECT_EQ(p.err,
            "gpuidle: warning: no NVIDIA GPU on this machine (/dev/nvidiactl is missing); the "
            "command runs without profiling\n");
}

TEST(GpuidleRun, LeavesStandardOutputToTheCommand) {
  TempDir dir;
  const Process p = RunWith(dir, {"--", "/bin/echo", "hello"});
  EXPECT_EQ(p.code, 0);
  EXPECT_EQ(p.out, "hello\n");
  EXPECT_EQ(p.err, "");
}

TEST(GpuidleRun, LeavesStandardInputAndErrorToTheCommand) {
  TempDir dir;
  const std::string input = dir.Write("input.txt", "line 1\nline 2\n");
  Launch launch{{"run", "--", "sh", "-c", "cat; echo oops >&2"},
                {{"GPUIDLE_LIBRARY", FakeLibrary(dir)}}};
  launch.stdin_path = input;
  const Process p = RunGpuidle(dir, launch);
  EXPECT_EQ(p.code, 0);
  EXPECT_EQ(p.out, "line 1\nline 2\n");
  EXPECT_EQ(p.err, "oops\n");
}

TEST(GpuidleRun, PassesTheArgumentsVerbatim) {
  TempDir dir;
  const Process p = RunWith(
      dir, {"--", "sh", "-c", "printf '%s|' \"$@\"", "sh", "a b", "", "--out", "$HOME", "*"});
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.out, "a b||--out|$HOME|*|");
}

TEST(GpuidleRun, TakesTheFirstArgumentThatIsNoOptionAsTheCommand) {
  TempDir dir;
  const Process p = RunWith(dir, {"--quiet", "/bin/echo", "--out", "x"});
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.out, "--out x\n");
}

// --- the command's environment ---

TEST(GpuidleRun, PointsTheInjectionVariablesAtTheLibrary) {
  TempDir dir;
  const std::string library = FakeLibrary(dir);
  const Process p = RunGpuidle(
      dir, Launch{{"run", "--out", dir.Path("report.json"), "--", "sh", "-c",
                   "echo $CUDA_INJECTION64_PATH; echo $NVTX_INJECTION64_PATH; echo $GPUIDLE_OUT"},
                  {{"GPUIDLE_LIBRARY", library}}});
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.out, absl::StrCat(library, "\n", library, "\n", dir.Path("report.json"), "\n"));
  EXPECT_EQ(p.err, "");
}

TEST(GpuidleRun, TellsTheCommandItIsTheOneItStarted) {
  TempDir dir;
  const Process p =
      RunWith(dir, {"--", "sh", "-c", "[ \"$GPUIDLE_RUN_PARENT\" = \"$PPID\" ] && echo yes"});
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.out, "yes\n");
}

TEST(GpuidleRun, TranslatesEveryFlagToItsVariable) {
  TempDir dir;
  const Process p = RunWith(dir, {"--out",
                                  "/r/%r.json",
                                  "--format",
                                  "json",
                                  "--trace",
                                  "/t/%p.json.gz",
                                  "--quiet",
                                  "--launch-gap-max-us",
                                  "250",
                                  "--dispatch-latency-max-us",
                                  "12.5",
                                  "--data-range",
                                  "fetch",
                                  "--data-range",
                                  "load_shard",
                                  "--max-gaps",
                                  "9",
                                  "--max-records",
                                  "1000",
                                  "--buffer-mb",
                                  "128",
                                  "--",
                                  "sh",
                                  "-c",
                                  "env | grep '^GPUIDLE_' | grep -v "
                                  "'^GPUIDLE_LIBRARY=\\|^GPUIDLE_WARNED=\\|^GPUIDLE_RUN_PARENT=' "
                                  "| sort"});
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.out,
            "GPUIDLE_BUFFER_MB=128\n"
            "GPUIDLE_DATA_RANGE=fetch,load_shard\n"
            "GPUIDLE_DISPATCH_LATENCY_MAX_US=12.5\n"
            "GPUIDLE_FORMAT=json\n"
            "GPUIDLE_LAUNCH_GAP_MAX_US=250\n"
            "GPUIDLE_MAX_GAPS=9\n"
            "GPUIDLE_MAX_RECORDS=1000\n"
            "GPUIDLE_OUT=/r/%r.json\n"
            "GPUIDLE_QUIET=1\n"
            "GPUIDLE_TRACE=/t/%p.json.gz\n");
}

TEST(GpuidleRun, LetsFlagsOverrideTheInheritedVariables) {
  TempDir dir;
  const Process p = RunWith(dir, {"--format", "json", "--", "sh", "-c", "echo $GPUIDLE_FORMAT"},
                            {{"GPUIDLE_FORMAT", "text"}});
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.out, "json\n");
}

TEST(GpuidleRun, PassesTheInheritedVariablesOn) {
  TempDir dir;
  const Process p =
      RunWith(dir, {"--", "sh", "-c", "echo $GPUIDLE_OUT $GPUIDLE_MAX_GAPS $HOME_OF_TEST"},
              {{"GPUIDLE_OUT", "x.%p.json"}, {"GPUIDLE_MAX_GAPS", "3"}, {"HOME_OF_TEST", "h"}});
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.out, "x.%p.json 3 h\n");
}

// The command may change directory before it exits and the report is written.
TEST(GpuidleRun, MakesRelativeOutputPathsAbsolute) {
  TempDir dir;
  const std::string sub = dir.Path("50%");
  ASSERT_TRUE(std::filesystem::create_directory(sub));
  Launch launch{{"run", "--out", "r.%p.json", "--trace", "t.json", "--", "sh", "-c",
                 "echo $GPUIDLE_OUT; echo $GPUIDLE_TRACE"},
                {{"GPUIDLE_LIBRARY", FakeLibrary(dir)}}};
  launch.cwd = sub;
  const Process p = RunGpuidle(dir, launch);
  EXPECT_EQ(p.code, 0) << p.err;
  // The directory's own '%' is escaped so that it is not read as a placeholder.
  EXPECT_EQ(p.out, absl::StrCat(dir.path(), "/50%%/r.%p.json\n", dir.path(), "/50%%/t.json\n"));
}

TEST(GpuidleRun, StepsAsideForAnotherInjectionTool) {
  TempDir dir;
  const Process p =
      RunWith(dir,
              {"--out", "/tmp/r.json", "--", "sh", "-c",
               "echo \"$CUDA_INJECTION64_PATH|$NVTX_INJECTION64_PATH|$GPUIDLE_OUT\"; exit 3"},
              {{"CUDA_INJECTION64_PATH", "/opt/nsight/libToolsInjection64.so"}});
  EXPECT_EQ(p.code, 3);
  EXPECT_EQ(p.out, "/opt/nsight/libToolsInjection64.so||\n");  // untraced, as it was
  EXPECT_THAT(p.err, StartsWith("gpuidle: CUDA_INJECTION64_PATH is already set to "
                                "/opt/nsight/libToolsInjection64.so"));
  EXPECT_THAT(p.err, HasSubstr("steps aside"));
  EXPECT_EQ(std::count(p.err.begin(), p.err.end(), '\n'), 1) << "one warning line";
}

TEST(GpuidleRun, RunsNormallyWhenTheInjectionAlreadyIsGpuidle) {
  TempDir dir;
  const std::string library = FakeLibrary(dir);
  const Process p = RunGpuidle(dir, Launch{{"run", "--", "sh", "-c", "echo $CUDA_INJECTION64_PATH"},
                                           {{"GPUIDLE_LIBRARY", library},
                                            {"CUDA_INJECTION64_PATH", library},
                                            {"NVTX_INJECTION64_PATH", library}}});
  EXPECT_EQ(p.code, 0);
  EXPECT_EQ(p.out, library + "\n");
  EXPECT_EQ(p.err, "");
}

TEST(GpuidleRun, LeavesNvtxToAnotherToolWithAWarning) {
  TempDir dir;
  const std::string library = FakeLibrary(dir);
  const Process p = RunGpuidle(
      dir,
      Launch{{"run", "--", "sh", "-c", "echo \"$CUDA_INJECTION64_PATH|$NVTX_INJECTION64_PATH\""},
             {{"GPUIDLE_LIBRARY", library}, {"NVTX_INJECTION64_PATH", "/opt/other/nvtx.so"}}});
  EXPECT_EQ(p.code, 0);
  EXPECT_EQ(p.out, library + "|/opt/other/nvtx.so\n");
  EXPECT_THAT(p.err, StartsWith("gpuidle: NVTX_INJECTION64_PATH is already set to "
                                "/opt/other/nvtx.so; NVTX markers go to that tool"));
}

// --- finding libgpuidle.so ---

TEST(GpuidleRun, FindsTheLibraryOfTheBuildNextToTheExecutable) {
  const std::filesystem::path library =
      (std::filesystem::path(kCli).parent_path().parent_path() / "lib" / "libgpuidle.so")
          .lexically_normal();
  if (!Exists(library.string())) GTEST_SKIP() << "libgpuidle.so is not built";
  TempDir dir;
  const Process p =
      RunGpuidle(dir, Launch{{"run", "--", "sh", "-c", "echo $CUDA_INJECTION64_PATH"}});
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.out, library.string() + "\n");
}

TEST(GpuidleRun, FindsTheLibraryOfAnInstallation) {
  TempDir dir;
  const std::string bin = dir.Path("prefix/bin"), lib = dir.Path("prefix/lib");
  ASSERT_TRUE(std::filesystem::create_directories(bin));
  const std::string copy = bin + "/gpuidle";
  std::filesystem::copy_file(kCli, copy);
  const Launch launch{{"run", "--", "sh", "-c", "echo $CUDA_INJECTION64_PATH"}, {}, copy};

  Process p = RunGpuidle(dir, launch);
  EXPECT_EQ(p.code, kExitNoLibrary);
  EXPECT_THAT(p.err, StartsWith("gpuidle: cannot find libgpuidle.so (looked in " + lib));
  EXPECT_THAT(p.err, HasSubstr("); set GPUIDLE_LIBRARY\n"));
  EXPECT_EQ(p.out, "");  // the command did not run

#if defined(__x86_64__)
  // Debian's multiarch directory, and only the SONAME file (a runtime-only install).
  ASSERT_TRUE(std::filesystem::create_directories(lib + "/x86_64-linux-gnu"));
  const std::string multiarch = dir.Write("prefix/lib/x86_64-linux-gnu/libgpuidle.so.0", "ELF?");
  p = RunGpuidle(dir, launch);
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.out, multiarch + "\n");
#endif

  std::filesystem::create_directories(lib);
  const std::string plain = dir.Write("prefix/lib/libgpuidle.so", "ELF?");
  p = RunGpuidle(dir, launch);
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.out, plain + "\n");
}

TEST(GpuidleRun, ReportsAMissingGpuidleLibraryVariable) {
  TempDir dir;
  const std::string marker = dir.Path("ran");
  const Process p =
      RunGpuidle(dir, Launch{{"run", "--", "sh", "-c", "touch '" + marker + "'"},
                             {{"GPUIDLE_LIBRARY", dir.Path("nowhere/libgpuidle.so")}}});
  EXPECT_EQ(p.code, kExitNoLibrary);
  EXPECT_EQ(p.err, "gpuidle: GPUIDLE_LIBRARY=" + dir.Path("nowhere/libgpuidle.so") +
                       ": No such file or directory\n");
  EXPECT_FALSE(Exists(marker));
}

TEST(GpuidleRun, MakesARelativeGpuidleLibraryAbsolute) {
  TempDir dir;
  FakeLibrary(dir);
  Launch launch{{"run", "--", "sh", "-c", "echo $CUDA_INJECTION64_PATH"},
                {{"GPUIDLE_LIBRARY", "./libgpuidle_fake.so"}}};
  launch.cwd = dir.path();
  const Process p = RunGpuidle(dir, launch);
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.out, dir.Path("libgpuidle_fake.so") + "\n");
}

// --- commands that cannot run ---

TEST(GpuidleRun, Exits127ForACommandThatDoesNotExist) {
  TempDir dir;
  Process p = RunWith(dir, {"--", "gpuidle-no-such-command", "x"});
  EXPECT_EQ(p.code, 127);
  EXPECT_EQ(p.err, "gpuidle: cannot run gpuidle-no-such-command: No such file or directory\n");
  EXPECT_EQ(p.out, "");
  p = RunWith(dir, {"--", dir.Path("missing.sh")});
  EXPECT_EQ(p.code, 127);
  EXPECT_THAT(p.err, HasSubstr("No such file or directory"));
}

TEST(GpuidleRun, Exits126ForACommandThatIsNotExecutable) {
  TempDir dir;
  const std::string script = dir.Write("script.sh", "#!/bin/sh\necho hi\n");
  const Process p = RunWith(dir, {"--", script});
  EXPECT_EQ(p.code, 126);
  EXPECT_EQ(p.err, "gpuidle: cannot run " + script + ": Permission denied\n");
}

// --- bad command lines: exit 2, the command never runs ---

TEST(GpuidleRun, RejectsBadFlagsWithoutRunningTheCommand) {
  TempDir dir;
  const std::string marker = dir.Path("ran");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--format", "xml"}, "--format \"xml\": must be \"text\", \"json\" or \"html\""},
      {{"--launch-gap-max-us", "-5"}, "--launch-gap-max-us \"-5\": must be a positive"},
      {{"--dispatch-latency-max-us", "fast"}, "--dispatch-latency-max-us \"fast\": must be"},
      {{"--out", "report.%x.json"}, "unknown placeholder %x"},
      {{"--trace", "t%"}, "ends with a lone %"},
      {{"--max-gaps", "many"}, "--max-gaps \"many\": must be an integer from 0 to 1000000"},
      {{"--max-records", "0"}, "--max-records \"0\": must be a positive integer"},
      {{"--buffer-mb", "8192"}, "--buffer-mb \"8192\": must be an integer from 1 to 4096"},
      {{"--data-range", ""}, "--data-range needs a non-empty value"},
      {{"--fast"}, "unknown option --fast"},
  };
  for (const auto& [flags, message] : cases) {
    std::vector<std::string> args = flags;
    for (const char* a : {"--", "sh", "-c"}) args.push_back(a);
    args.push_back("touch '" + marker + "'");
    const Process p = RunWith(dir, args);
    EXPECT_EQ(p.code, kExitUsage) << flags[0];
    EXPECT_THAT(p.err, StartsWith("gpuidle: "));
    EXPECT_THAT(p.err, HasSubstr(message));
    EXPECT_EQ(p.out, "");
    EXPECT_FALSE(Exists(marker)) << flags[0];
  }
}

TEST(GpuidleRun, RejectsAFlagWithoutItsValue) {
  TempDir dir;
  for (const char* flag : {"--out", "--format", "--trace", "--launch-gap-max-us", "--buffer-mb"}) {
    const Process p = RunWith(dir, {flag});
    EXPECT_EQ(p.code, kExitUsage) << flag;
    EXPECT_THAT(p.err, HasSubstr(absl::StrCat(flag, " needs a value")));
  }
}

TEST(GpuidleRun, NeedsACommand) {
  TempDir dir;
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{}, {"--"}, {"--quiet", "--"}}) {
    const Process p = RunWith(dir, args);
    EXPECT_EQ(p.code, kExitUsage);
    EXPECT_THAT(p.err, HasSubstr("run needs a command"));
  }
}

// The flags are checked once, with the inherited variables, by the injected library's rules:
// a bad one is named as typed (not as the variable it became, nor as the absolute path a path
// flag becomes), and even a switched-off gpuidle does not hide it.
TEST(GpuidleRun, NamesABadFlagAsTypedEvenWhenSwitchedOff) {
  TempDir dir;
  const std::string marker = dir.Path("ran");
  const std::vector<std::string> command = {"--", "sh", "-c", "touch '" + marker + "'"};
  std::vector<std::string> args = {"--trace", "t%q.json"};
  args.insert(args.end(), command.begin(), command.end());
  Process p = RunWith(dir, args);
  EXPECT_EQ(p.code, kExitUsage);
  EXPECT_THAT(p.err,
              StartsWith("gpuidle: --trace \"t%q.json\": unknown placeholder %q in output path "
                         "\"t%q.json\""));
  EXPECT_FALSE(Exists(marker));

  args = {"--max-gaps", "many"};
  args.insert(args.end(), command.begin(), command.end());
  p = RunWith(dir, args, {{"GPUIDLE_DISABLE", "1"}, {"GPUIDLE_BUFFER_MB", "lots"}});
  EXPECT_EQ(p.code, kExitUsage);
  EXPECT_THAT(p.err, StartsWith("gpuidle: --max-gaps \"many\": must be an integer"));
  EXPECT_FALSE(Exists(marker));

  // Switched off, a bad inherited variable is nobody's business: the command runs.
  p = RunWith(dir, command, {{"GPUIDLE_DISABLE", "1"}, {"GPUIDLE_BUFFER_MB", "lots"}});
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_TRUE(Exists(marker));
}

TEST(GpuidleRun, RejectsABadInheritedVariableUnlessAFlagReplacesIt) {
  TempDir dir;
  const std::string marker = dir.Path("ran");
  Process p =
      RunWith(dir, {"--", "sh", "-c", "touch '" + marker + "'"}, {{"GPUIDLE_BUFFER_MB", "lots"}});
  EXPECT_EQ(p.code, kExitUsage);
  EXPECT_THAT(p.err, StartsWith("gpuidle: GPUIDLE_BUFFER_MB=lots: must be an integer from 1 to "
                                "4096 (from the environment)\n"));
  EXPECT_FALSE(Exists(marker));

  p = RunWith(dir, {"--buffer-mb", "32", "--", "sh", "-c", "touch '" + marker + "'"},
              {{"GPUIDLE_BUFFER_MB", "lots"}});
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_TRUE(Exists(marker));
}

TEST(GpuidleRun, PrintsItsOwnHelp) {
  TempDir dir;
  for (const char* flag : {"--help", "-h"}) {
    const Process p = RunWith(dir, {"--quiet", flag, "--", "/bin/false"});
    EXPECT_EQ(p.code, 0) << flag;
    EXPECT_THAT(p.out, StartsWith("usage: gpuidle run [options] [--] COMMAND [ARGS...]\n"));
    EXPECT_THAT(p.out, HasSubstr("run options"));
    EXPECT_THAT(p.out, HasSubstr("--buffer-mb N"));
    EXPECT_THAT(p.out, HasSubstr("5 libgpuidle.so not found"));
    EXPECT_THAT(p.out, ::testing::Not(HasSubstr("analyze options")));
    EXPECT_THAT(p.out, ::testing::Not(HasSubstr("usage: gpuidle <command>")));
    EXPECT_EQ(p.err, "");
  }
  // After the command, --help is the command's.
  const Process theirs = RunWith(dir, {"/bin/echo", "x", "--help"});
  EXPECT_EQ(theirs.code, 0);
  EXPECT_EQ(theirs.out, "x --help\n");
}

// --flag=VALUE is --flag VALUE, and -o is --out, for run's options; the command's arguments stay
// as they are.
TEST(GpuidleRun, TakesValuesAfterAnEqualsSignAndDashO) {
  TempDir dir;
  Process p = RunWith(dir, {"--out=/r/a=b.json", "--max-gaps=9", "--format=json", "--", "sh", "-c",
                            "echo $GPUIDLE_OUT $GPUIDLE_MAX_GAPS $GPUIDLE_FORMAT"});
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.out, "/r/a=b.json 9 json\n");
  p = RunWith(dir, {"-o", "/r/%r.json", "sh", "-c", "echo $GPUIDLE_OUT"});
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.out, "/r/%r.json\n");
  p = RunWith(dir, {"--quiet", "/bin/echo", "--out=x", "-o", "y", "--max-gaps=1"});
  EXPECT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.out, "--out=x -o y --max-gaps=1\n");
  p = RunWith(dir, {"--", "/bin/echo", "--format=json"});
  EXPECT_EQ(p.out, "--format=json\n");
  // Bad values are named as they are apart; a switch takes none.
  p = RunWith(dir, {"--buffer-mb=0", "--", "/bin/true"});
  EXPECT_EQ(p.code, kExitUsage);
  EXPECT_THAT(p.err, HasSubstr("--buffer-mb \"0\": must be an integer from 1 to 4096"));
  p = RunWith(dir, {"--quiet=1", "--", "/bin/true"});
  EXPECT_EQ(p.code, kExitUsage);
  EXPECT_THAT(p.err, HasSubstr("--quiet takes no value"));
}

// --- signals while the command runs ---

class GpuidleRunSignals : public ::testing::Test {
 protected:
  // Starts `gpuidle run` on a command that signals readiness, then sleeps.
  pid_t StartSleeper() {
    const std::string ready = dir_.Path("ready");
    return Start(dir_, Launch{{"run", "--", "sh", "-c", "touch '" + ready + "'; exec sleep 30"},
                              {{"GPUIDLE_LIBRARY", FakeLibrary(dir_)}}});
  }
  bool WaitUntilReady() { return WaitFor(dir_.Path("ready")); }

  TempDir dir_;
};

TEST_F(GpuidleRunSignals, ForwardsTerminateToTheCommand) {
  const pid_t pid = StartSleeper();
  ASSERT_TRUE(WaitUntilReady());
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  const Process p = Finish(dir_, pid);
  EXPECT_EQ(p.code, 128 + SIGTERM) << p.err;  // gpuidle exited, with the command's status
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST_F(GpuidleRunSignals, ForwardsHangupToTheCommand) {
  const pid_t pid = StartSleeper();
  ASSERT_TRUE(WaitUntilReady());
  ASSERT_EQ(::kill(pid, SIGHUP), 0);
  EXPECT_EQ(Finish(dir_, pid).code, 128 + SIGHUP);
}

// An interrupt from the terminal reaches the whole foreground group; gpuidle outlives it to
// pass on the command's status.
TEST_F(GpuidleRunSignals, IgnoresInterruptAndQuitItself) {
  const pid_t pid = StartSleeper();
  ASSERT_TRUE(WaitUntilReady());
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  ASSERT_EQ(::kill(pid, SIGQUIT), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  int status = 0;
  EXPECT_EQ(::waitpid(pid, &status, WNOHANG), 0) << "gpuidle died of the signal";
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  EXPECT_EQ(Finish(dir_, pid).code, 128 + SIGTERM);
}

}  // namespace
}  // namespace gpuidle::internal
