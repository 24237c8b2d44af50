// Which CUPTI the loader takes and what it says when it cannot take one: GPUIDLE_CUPTI_PATH
// naming a missing file or another library (never a quiet fall-back), a libcupti.so.13 that is
// another library, a CUPTI already in the process. CUPTI is loaded once per process, so each
// case runs this binary again with GPUIDLE_LOADER_HELPER=1: it loads CUPTI, prints
// "load: <code>: <message>" and exits 0, instead of running the tests.
#include <dlfcn.h>
#include <limits.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "collect/cupti_api.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"

namespace gpuidle::internal {
namespace {

using ::gpuidle::testing::ProcessResult;
using ::gpuidle::testing::RunProcess;
using ::gpuidle::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr char kSystemCupti[] = "/usr/local/cuda/lib64/libcupti.so.13";

std::string SelfPath() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

// What LoadCupti said in a fresh process with env: "OK" or "<CODE>: <message>".
std::string LoadInFreshProcess(std::map<std::string, std::string> env) {
  TempDir dir;
  env["GPUIDLE_LOADER_HELPER"] = "1";
  const ProcessResult r = RunProcess(dir, {SelfPath()}, env);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "") << "the loader prints nothing itself";
  constexpr absl::string_view kPrefix = "load: ";
  if (!absl::StartsWith(r.out, kPrefix) || !absl::EndsWith(r.out, "\n")) {
    ADD_FAILURE() << "helper said: " << r.out;
    return "";
  }
  return r.out.substr(kPrefix.size(), r.out.size() - kPrefix.size() - 1);
}

// A folder whose libcupti.so.13 is another library (zlib, which this test links).
std::string NotCuptiDirectory(const TempDir& dir) {
  Dl_info info{};
  EXPECT_NE(dladdr(reinterpret_cast<void*>(&zlibVersion), &info), 0);
  const std::string folder = dir.Path("not-cupti");
  std::filesystem::create_directory(folder);
  std::filesystem::create_symlink(info.dli_fname, folder + "/libcupti.so.13");
  return folder;
}

bool HaveSystemCupti() { return std::filesystem::exists(kSystemCupti); }

TEST(CuptiLoader, AMissingFileInTheVariableIsAnErrorNamingItNotAFallBack) {
  TempDir dir;
  const std::string missing = dir.Path("nowhere/libcupti.so.13");
  const std::string said = LoadInFreshProcess({{"GPUIDLE_CUPTI_PATH", missing}});
  EXPECT_THAT(said, StartsWith("INVALID_ARGUMENT: GPUIDLE_CUPTI_PATH: "));
  EXPECT_THAT(said, HasSubstr(missing));
  EXPECT_THAT(said, HasSubstr("No such file"));
  EXPECT_LE(said.size(), 400u) << said;
}

TEST(CuptiLoader, ALibraryInTheVariableThatIsNotCuptiIsAnErrorNamingBoth) {
  TempDir dir;
  const std::string fake = NotCuptiDirectory(dir) + "/libcupti.so.13";
  const std::string said = LoadInFreshProcess({{"GPUIDLE_CUPTI_PATH", fake}});
  EXPECT_EQ(said, absl::StrCat("INVALID_ARGUMENT: GPUIDLE_CUPTI_PATH: ", fake,
                               " is not CUPTI (it has no cuptiGetVersion)"));
}

TEST(CuptiLoader, ALibcuptiOnTheLibraryPathThatIsAnotherLibraryIsNamedByItsPath) {
  TempDir dir;
  const std::string folder = NotCuptiDirectory(dir);
  const std::string said = LoadInFreshProcess({{"LD_LIBRARY_PATH", folder}});
  // The file as the library path reached it, not the zlib it links to.
  EXPECT_EQ(said, absl::StrCat("UNAVAILABLE: ", folder,
                               "/libcupti.so.13 is not CUPTI (it has no cuptiGetVersion)"));
}

TEST(CuptiLoader, TheVariableNamingTheSystemsCuptiLoadsIt) {
  if (!HaveSystemCupti()) GTEST_SKIP() << "no " << kSystemCupti;
  EXPECT_EQ(LoadInFreshProcess({{"GPUIDLE_CUPTI_PATH", kSystemCupti}}), "OK");
  EXPECT_EQ(LoadInFreshProcess({}), "OK") << "found without the variable too";
}

TEST(CuptiLoader, ACuptiAlreadyInTheProcessWinsAndAVariableNamingAnotherIsAnError) {
  if (!HaveSystemCupti()) GTEST_SKIP() << "no " << kSystemCupti;
  TempDir dir;
  const std::string fake = NotCuptiDirectory(dir) + "/libcupti.so.13";
  // PyTorch's case: its own CUPTI is loaded before gpuidle looks.
  const std::string said =
      LoadInFreshProcess({{"LD_PRELOAD", kSystemCupti}, {"GPUIDLE_CUPTI_PATH", fake}});
  EXPECT_THAT(said, StartsWith("INVALID_ARGUMENT: GPUIDLE_CUPTI_PATH names " + fake));
  EXPECT_THAT(said, HasSubstr("already uses the CUPTI in"));
  EXPECT_THAT(said, HasSubstr("libcupti.so.13"));
  EXPECT_EQ(
      LoadInFreshProcess({{"LD_PRELOAD", kSystemCupti}, {"GPUIDLE_CUPTI_PATH", kSystemCupti}}),
      "OK")
      << "the variable naming the loaded CUPTI itself is fine";
}

TEST(CuptiLoader, AHugePathIsShortenedAndEscapedInTheMessage) {
  const std::string huge = "/tmp/\x1b[2J" + std::string(5000, 'a');
  const std::string said = LoadInFreshProcess({{"GPUIDLE_CUPTI_PATH", huge}});
  EXPECT_THAT(said, StartsWith("INVALID_ARGUMENT: GPUIDLE_CUPTI_PATH: "));
  EXPECT_LE(said.size(), 400u) << said;
  EXPECT_THAT(said, Not(HasSubstr("\x1b"))) << "a control character reached the message";
}

}  // namespace
}  // namespace gpuidle::internal

int main(int argc, char** argv) {
  if (const char* helper = std::getenv("GPUIDLE_LOADER_HELPER"); helper != nullptr && *helper) {
    const absl::StatusOr<const gpuidle::internal::CuptiApi*> api = gpuidle::internal::LoadCupti();
    if (api.ok()) {
      std::printf("load: OK\n");
    } else {
      std::printf("load: %s: %s\n", absl::StatusCodeToString(api.status().code()).c_str(),
                  std::string(api.status().message()).c_str());
    }
    return 0;
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
