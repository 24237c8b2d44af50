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

// --- WriteNewFile ---

TEST(WriteNewFile, WritesANewFileAndReturnsItsPath) {
  TempDir dir;
  const std::string path = dir.Path("report.json");
  const absl::StatusOr<std::string> written = WriteNewFile(path, "{}\n", 12345);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(*written, path);
  EXPECT_EQ(ReadFileOrDie(path), "{}\n");
  EXPECT_THAT(dir.List(), ElementsAre("report.json"));  // no temporary file left
}

TEST(WriteNewFile, CreatesFilesWithTheModeTheUmaskAllows) {
  TempDir dir;
  const mode_t old_mask = ::umask(027);
  const absl::StatusOr<std::string> written = WriteNewFile(dir.Path("r.txt"), "x", 1);
  ::umask(old_mask);
  ASSERT_TRUE(written.ok()) << written.status();
  struct stat st {};
  ASSERT_EQ(::stat(written->c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}

TEST(WriteNewFile, NeverReplacesAnExistingFile) {
  TempDir dir;
  const std::string path = dir.Write("report.json", "first\n");
  absl::StatusOr<std::string> written = WriteNewFile(path, "second\n", 12345);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(*written, dir.Path("report.12345.json"));
  written = WriteNewFile(path, "third\n", 12345);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(*written, dir.Path("report.12345-2.json"));
  written = WriteNewFile(path, "fourth\n", 12345);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(*written, dir.Path("report.12345-3.json"));

  EXPECT_EQ(ReadFileOrDie(path), "first\n");
  EXPECT_EQ(ReadFileOrDie(dir.Path("report.12345.json")), "second\n");
  EXPECT_EQ(ReadFileOrDie(dir.Path("report.12345-2.json")), "third\n");
  EXPECT_EQ(ReadFileOrDie(dir.Path("report.12345-3.json")), "fourth\n");
  EXPECT_THAT(dir.List(), ElementsAre("report.12345-2.json", "report.12345-3.json",
                                      "report.12345.json", "report.json"));
}

TEST(WriteNewFile, PutsThePidBeforeACompressedExtension) {
  TempDir dir;
  const std::string path = dir.Write("trace.json.gz", "old");
  const absl::StatusOr<std::string> written = WriteNewFile(path, "new", 77);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(*written, dir.Path("trace.77.json.gz"));
}

TEST(WriteNewFile, NeverWritesThroughASymlink) {
  TempDir dir;
  const std::string victim = dir.Write("victim", "precious\n");
  const std::string link = dir.Path("report.txt");
  ASSERT_EQ(::symlink(victim.c_str(), link.c_str()), 0);
  const absl::StatusOr<std::string> written = WriteNewFile(link, "report\n", 9);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(*written, dir.Path("report.9.txt"));
  EXPECT_EQ(ReadFileOrDie(victim), "precious\n");
  EXPECT_TRUE(IsSymlink(link));
  EXPECT_EQ(ReadFileOrDie(*written), "report\n");
  EXPECT_THAT(dir.List(), ElementsAre("report.9.txt", "report.txt", "victim"));
}

TEST(WriteNewFile, DoesNotCreateTheTargetOfADanglingSymlink) {
  TempDir dir;
  const std::string victim = dir.Path("victim");
  const std::string link = dir.Path("report.txt");
  ASSERT_EQ(::symlink(victim.c_str(), link.c_str()), 0);
  const absl::StatusOr<std::string> written = WriteNewFile(link, "report\n", 9);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(*written, dir.Path("report.9.txt"));
  EXPECT_FALSE(std::filesystem::exists(victim));
  EXPECT_TRUE(IsSymlink(link));
}

TEST(WriteNewFile, WritesToARelativePath) {
  TempDir dir;
  const std::filesystem::path old = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  const absl::StatusOr<std::string> first = WriteNewFile("plain.txt", "1", 3);
  const absl::StatusOr<std::string> second = WriteNewFile("plain.txt", "2", 3);
  std::filesystem::current_path(old);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(*first, "plain.txt");
  EXPECT_EQ(*second, "plain.3.txt");
  EXPECT_THAT(dir.List(), ElementsAre("plain.3.txt", "plain.txt"));
}

TEST(WriteNewFile, FailsInAMissingDirectoryNamingThePathAndTheReason) {
  TempDir dir;
  const std::string path = dir.Path("missing/report.json");
  const absl::StatusOr<std::string> written = WriteNewFile(path, "x", 1);
  ASSERT_FALSE(written.ok());
  EXPECT_THAT(std::string(written.status().message()), StartsWith("cannot write " + path));
  EXPECT_THAT(std::string(written.status().message()), HasSubstr("No such file or directory"));
  EXPECT_THAT(dir.List(), IsEmpty());
}

TEST(WriteNewFile, RefusesADirectory) {
  TempDir dir;
  for (const std::string& path : {dir.path(), dir.path() + "/"}) {
    const absl::StatusOr<std::string> written = WriteNewFile(path, "x", 1);
    ASSERT_FALSE(written.ok()) << path;
    EXPECT_THAT(std::string(written.status().message()), StartsWith("cannot write " + path));
    EXPECT_THAT(std::string(written.status().message()), HasSubstr("is a directory"));
  }
  EXPECT_THAT(dir.List(), IsEmpty());
}

TEST(WriteNewFile, RefusesAnEmptyName) {
  EXPECT_EQ(WriteNewFile("", "x", 1).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(WriteNewFile, FailsInAReadOnlyDirectoryAndLeavesNothing) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes into read-only directories";
  TempDir dir;
  const std::string sub = dir.Path("ro");
  ASSERT_EQ(::mkdir(sub.c_str(), 0555), 0);
  const absl::StatusOr<std::string> written = WriteNewFile(sub + "/report.json", "x", 1);
  ::chmod(sub.c_str(), 0755);
  ASSERT_FALSE(written.ok());
  EXPECT_THAT(std::string(written.status().message()), StartsWith("cannot write " + sub));
  EXPECT_THAT(std::string(written.status().message()), HasSubstr("Permission denied"));
  EXPECT_THAT(ListDir(sub), IsEmpty());
}

TEST(WriteNewFile, FailsUnderARegularFile) {
  TempDir dir;
  const std::string file = dir.Write("file", "keep\n");
  const absl::StatusOr<std::string> written = WriteNewFile(file + "/report.json", "x", 1);
  ASSERT_FALSE(written.ok());
  EXPECT_THAT(std::string(written.status().message()), HasSubstr("Not a directory"));
  EXPECT_EQ(ReadFileOrDie(file), "keep\n");
  EXPECT_THAT(dir.List(), ElementsAre("file"));
}

TEST(WriteNewFile, FailsWhenTheAlternativeNameIsTooLongAndLeavesNothingBehind) {
  TempDir dir;
  const std::string name(255, 'r');  // NAME_MAX: the name with the pid added is too long
  const std::string path = dir.Write(name, "old");
  const absl::StatusOr<std::string> written = WriteNewFile(path, "new", 123);
  ASSERT_FALSE(written.ok());
  EXPECT_THAT(std::string(written.status().message()), HasSubstr("File name too long"));
  EXPECT_EQ(ReadFileOrDie(path), "old");
  EXPECT_THAT(dir.List(), ElementsAre(name));
}

// The file size limit binds root too.
TEST(WriteNewFile, LeavesNothingBehindWhenTheWriteFails) {
  TempDir dir;
  const std::string path = dir.Path("report.txt");
  struct rlimit old_limit {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  struct rlimit small = old_limit;
  small.rlim_cur = 4096;
  void (*old_handler)(int) = ::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const absl::StatusOr<std::string> written = WriteNewFile(path, std::string(64 << 10, 'x'), 1);
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  ::signal(SIGXFSZ, old_handler);
  ASSERT_FALSE(written.ok());
  EXPECT_THAT(std::string(written.status().message()), StartsWith("cannot write " + path));
  EXPECT_THAT(std::string(written.status().message()), HasSubstr("write failed"));
  EXPECT_THAT(dir.List(), IsEmpty());
}

TEST(WriteNewFile, GivesEveryWriterOfOneNameItsOwnFile) {
  TempDir dir;
  const std::string path = dir.Path("report.json");
  std::vector<std::string> written;
  for (int i = 0; i < 20; ++i) {
    const absl::StatusOr<std::string> w = WriteNewFile(path, absl::StrCat(i), 555);
    ASSERT_TRUE(w.ok()) << w.status();
    written.push_back(*w);
  }
  EXPECT_EQ(dir.List().size(), 20u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(ReadFileOrDie(written[i]), absl::StrCat(i));
}

}  // namespace
}  // namespace gpuidle::internal
