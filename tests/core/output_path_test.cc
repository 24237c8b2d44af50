#include "core/output_path.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/temp_dir.h"

namespace gpuidle::internal {
namespace {

using ::gpuidle::testing::ListDir;
using ::gpuidle::testing::ReadFileOrDie;
using ::gpuidle::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

// Sets (or with nullopt unsets) an environment variable for the lifetime of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

ProcessIdentity Identity() { return ProcessIdentity{4242, "3", "node7"}; }

bool IsSymlink(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

// --- CurrentProcessIdentity ---

TEST(CurrentProcessIdentity, HasThePidAndTheHostName) {
  const ProcessIdentity id = CurrentProcessIdentity();
  EXPECT_EQ(id.pid, static_cast<int64_t>(::getpid()));
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof(host) - 1), 0);
  EXPECT_EQ(id.host, host);
}

TEST(CurrentProcessIdentity, TakesTheRankFromTheFirstLauncherVariableSet) {
  ScopedEnv rank("RANK", std::nullopt), ompi("OMPI_COMM_WORLD_RANK", std::nullopt),
      pmi("PMI_RANK", std::nullopt), slurm("SLURM_PROCID", std::nullopt);
  EXPECT_EQ(CurrentProcessIdentity().rank, "0");
  {
    ScopedEnv s("SLURM_PROCID", "5");
    EXPECT_EQ(CurrentProcessIdentity().rank, "5");
    ScopedEnv p("PMI_RANK", "4");
    EXPECT_EQ(CurrentProcessIdentity().rank, "4");
    ScopedEnv o("OMPI_COMM_WORLD_RANK", "3");
    EXPECT_EQ(CurrentProcessIdentity().rank, "3");
    ScopedEnv r("RANK", "2");
    EXPECT_EQ(CurrentProcessIdentity().rank, "2");
  }
  ScopedEnv empty("RANK", "");  // set but empty: the next variable decides
  ScopedEnv s("SLURM_PROCID", "9");
  EXPECT_EQ(CurrentProcessIdentity().rank, "9");
}

// --- ExpandOutputPath ---

TEST(ExpandOutputPath, ReplacesEachPlaceholder) {
  EXPECT_EQ(*ExpandOutputPath("out/report.%p.json", Identity()), "out/report.4242.json");
  EXPECT_EQ(*ExpandOutputPath("rank%r-%h-%p.txt", Identity()), "rank3-node7-4242.txt");
  EXPECT_EQ(*ExpandOutputPath("100%%.json", Identity()), "100%.json");
  EXPECT_EQ(*ExpandOutputPath("%p%p", Identity()), "42424242");
  EXPECT_EQ(*ExpandOutputPath("%%p", Identity()), "%p");
}

TEST(ExpandOutputPath, LeavesAPathWithoutPlaceholdersAlone) {
  EXPECT_EQ(*ExpandOutputPath("/tmp/report.json", Identity()), "/tmp/report.json");
  EXPECT_EQ(*ExpandOutputPath("", Identity()), "");
}

TEST(ExpandOutputPath, KeepsSubstitutedValuesInOneDirectory) {
  const ProcessIdentity id{1, "../../etc", "a/b"};
  EXPECT_EQ(*ExpandOutputPath("r%r.%h.json", id), "r.._.._etc.a_b.json");
  EXPECT_EQ(*ExpandOutputPath("%r/report.json", ProcessIdentity{1, "..", "h"}), "__/report.json");
}

TEST(ExpandOutputPath, RejectsAnUnknownPlaceholderByName) {
  const absl::StatusOr<std::string> path = ExpandOutputPath("report.%x.json", Identity());
  ASSERT_FALSE(path.ok());
  EXPECT_EQ(path.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(path.status().message()), HasSubstr("unknown placeholder %x"));
  EXPECT_THAT(std::string(path.status().message()), HasSubstr("report.%x.json"));
}

TEST(ExpandOutputPath, RejectsATrailingPercentSign) {
  const absl::StatusOr<std::string> path = ExpandOutputPath("report%", Identity());
  ASSERT_FALSE(path.ok());
  EXPECT_EQ(path.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(path.status().message()), HasSubstr("ends with a lone %"));
}

// --- AlternativeOutputPath ---

TEST(AlternativeOutputPath, InsertsThePidBeforeTheExtension) {
  EXPECT_EQ(AlternativeOutputPath("report.json", 12345, 0), "report.json");
  EXPECT_EQ(AlternativeOutputPath("report.json", 12345, 1), "report.12345.json");
  EXPECT_EQ(AlternativeOutputPath("report.json", 12345, 2), "report.12345-2.json");
  EXPECT_EQ(AlternativeOutputPath("/a/b/report.txt", 7, 3), "/a/b/report.7-3.txt");
}

TEST(TaggedOutputPath, InsertsTheTagBeforeTheExtension) {
  EXPECT_EQ(TaggedOutputPath("report.json", "partial"), "report.partial.json");
  EXPECT_EQ(TaggedOutputPath("out/report.%r.json", "partial"), "out/report.%r.partial.json");
  EXPECT_EQ(TaggedOutputPath("trace.json.gz", "partial"), "trace.partial.json.gz");
  EXPECT_EQ(TaggedOutputPath("report", "partial"), "report.partial");
  EXPECT_EQ(TaggedOutputPath("/a.b/report", "partial"), "/a.b/report.partial");
}

TEST(AlternativeOutputPath, KeepsADoubleExtensionWithACompressionSuffixTogether) {
  EXPECT_EQ(AlternativeOutputPath("trace.json.gz", 12345, 1), "trace.12345.json.gz");
  EXPECT_EQ(AlternativeOutputPath("run.1.trace.json.gz", 9, 1), "run.1.trace.9.json.gz");
  EXPECT_EQ(AlternativeOutputPath("trace.gz", 9, 1), "trace.9.gz");
  EXPECT_EQ(AlternativeOutputPath("trace.tar.zst", 9, 1), "trace.9.tar.zst");
}

TEST(AlternativeOutputPath, AppendsThePidToANameWithoutExtension) {
  EXPECT_EQ(AlternativeOutputPath("report", 5, 1), "report.5");
  EXPECT_EQ(AlternativeOutputPath("/x.d/report", 5, 1), "/x.d/report.5");  // dot of a directory
  EXPECT_EQ(AlternativeOutputPath(".report", 5, 1), ".report.5");          // a hidden file
  EXPECT_EQ(AlternativeOutputPath("dir/.report.json", 5, 1), "dir/.report.5.json");
  EXPECT_EQ(AlternativeOutputPath("report.", 5, 1), "report.5.");
}

}  // namespace
}  // namespace gpuidle::internal
