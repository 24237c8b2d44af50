#include "core/file_util.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/status/status.h"
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
using ::testing::StartsWith;

bool IsRegularFile(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool IsSymlink(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

bool Exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

// Runs the current directory in dir for the lifetime of the object.
class ScopedChdir {
 public:
  explicit ScopedChdir(const std::string& dir) : old_(std::filesystem::current_path()) {
    std::filesystem::current_path(dir);
  }
  ~ScopedChdir() { std::filesystem::current_path(old_); }

 private:
  std::filesystem::path old_;
};

TEST(WriteFileAtomically, WritesTheContentsToANewFile) {
  TempDir dir;
  const std::string path = dir.Path("report.json");
  ASSERT_TRUE(WriteFileAtomically(path, "{\"schema\": 1}\n").ok());
  EXPECT_EQ(ReadFileOrDie(path), "{\"schema\": 1}\n");
  EXPECT_THAT(dir.List(), ElementsAre("report.json"));  // no temporary file left
}

TEST(WriteFileAtomically, WritesAnEmptyFile) {
  TempDir dir;
  const std::string path = dir.Path("empty.txt");
  ASSERT_TRUE(WriteFileAtomically(path, "").ok());
  EXPECT_TRUE(IsRegularFile(path));
  EXPECT_EQ(ReadFileOrDie(path), "");
}

TEST(WriteFileAtomically, WritesLargeContentsCompletely) {
  TempDir dir;
  const std::string path = dir.Path("big.bin");
  std::string contents(8 << 20, '\0');
  for (size_t i = 0; i < contents.size(); ++i) contents[i] = static_cast<char>(i * 131 % 251);
  ASSERT_TRUE(WriteFileAtomically(path, contents).ok());
  EXPECT_EQ(ReadFileOrDie(path), contents);
}

TEST(WriteFileAtomically, ReplacesAnExistingFile) {
  TempDir dir;
  const std::string path = dir.Write("report.txt", "an old and rather long report\n");
  ASSERT_TRUE(WriteFileAtomically(path, "new\n").ok());
  EXPECT_EQ(ReadFileOrDie(path), "new\n");
  EXPECT_THAT(dir.List(), ElementsAre("report.txt"));
}

TEST(WriteFileAtomically, CreatesFilesWithTheModeTheUmaskAllows) {
  TempDir dir;
  const mode_t old_mask = ::umask(022);
  const std::string path = dir.Path("report.txt");
  const absl::Status status = WriteFileAtomically(path, "x");
  ::umask(old_mask);
  ASSERT_TRUE(status.ok()) << status;
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST(WriteFileAtomically, WritesToARelativePathInTheCurrentDirectory) {
  TempDir dir;
  {
    ScopedChdir in(dir.path());
    ASSERT_TRUE(WriteFileAtomically("plain.txt", "relative\n").ok());
  }
  EXPECT_EQ(ReadFileOrDie(dir.Path("plain.txt")), "relative\n");
  EXPECT_THAT(dir.List(), ElementsAre("plain.txt"));
}

TEST(WriteFileAtomically, WritesAFileWhoseNameHasTheLongestAllowedLength) {
  TempDir dir;
  const std::string name(255, 'r');  // NAME_MAX on Linux file systems
  ASSERT_TRUE(WriteFileAtomically(dir.Path(name), "long\n").ok());
  EXPECT_EQ(ReadFileOrDie(dir.Path(name)), "long\n");
  EXPECT_THAT(dir.List(), ElementsAre(name));
}

TEST(WriteFileAtomically, RefusesADirectoryAtThePath) {
  TempDir dir;
  const std::string target = dir.Path("out");
  ASSERT_EQ(::mkdir(target.c_str(), 0755), 0);
  const absl::Status status = WriteFileAtomically(target, "x");
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), StartsWith("cannot write " + target));
  EXPECT_THAT(std::string(status.message()), HasSubstr("directory"));
  EXPECT_TRUE(std::filesystem::is_directory(target));
  EXPECT_THAT(dir.List(), ElementsAre("out"));
  EXPECT_TRUE(std::filesystem::is_empty(target));
}

TEST(WriteFileAtomically, FailsInAMissingDirectoryAndCreatesNothing) {
  TempDir dir;
  const std::string target = dir.Path("missing/report.json");
  const absl::Status status = WriteFileAtomically(target, "x");
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), StartsWith("cannot write " + target));
  EXPECT_THAT(std::string(status.message()), HasSubstr("No such file or directory"));
  EXPECT_TRUE(dir.List().empty());
}

TEST(WriteFileAtomically, FailsUnderARegularFileAndLeavesItUntouched) {
  TempDir dir;
  const std::string file = dir.Write("file", "keep me\n");
  const absl::Status status = WriteFileAtomically(file + "/report.json", "x");
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr("Not a directory"));
  EXPECT_EQ(ReadFileOrDie(file), "keep me\n");
  EXPECT_THAT(dir.List(), ElementsAre("file"));
}

TEST(WriteFileAtomically, FailsInAReadOnlyDirectoryAndLeavesTheOldFile) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes into read-only directories";
  TempDir dir;
  const std::string sub = dir.Path("ro");
  ASSERT_EQ(::mkdir(sub.c_str(), 0755), 0);
  const std::string path = sub + "/report.txt";
  ASSERT_TRUE(WriteFileAtomically(path, "old\n").ok());
  ASSERT_EQ(::chmod(sub.c_str(), 0555), 0);
  const absl::Status status = WriteFileAtomically(path, "new\n");
  ::chmod(sub.c_str(), 0755);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(ReadFileOrDie(path), "old\n");
  EXPECT_THAT(ListDir(sub), ElementsAre("report.txt"));
}

// A failed write (here: the file size limit, which binds root too) keeps the old file and
// removes the temporary one.
TEST(WriteFileAtomically, KeepsTheOldFileWhenTheWriteFails) {
  TempDir dir;
  const std::string path = dir.Write("report.txt", "old report\n");
  struct rlimit old_limit {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  struct rlimit small = old_limit;
  small.rlim_cur = 4096;
  void (*old_handler)(int) = ::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const absl::Status status = WriteFileAtomically(path, std::string(64 << 10, 'x'));
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  ::signal(SIGXFSZ, old_handler);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), StartsWith("cannot write " + path));
  EXPECT_THAT(std::string(status.message()), HasSubstr("write failed"));
  EXPECT_EQ(ReadFileOrDie(path), "old report\n");
  EXPECT_THAT(dir.List(), ElementsAre("report.txt"));
}

TEST(WriteFileAtomically, ReplacesASymlinkInsteadOfWritingThroughIt) {
  TempDir dir;
  const std::string victim = dir.Write("victim", "precious\n");
  const std::string link = dir.Path("report.txt");
  ASSERT_EQ(::symlink(victim.c_str(), link.c_str()), 0);
  ASSERT_TRUE(WriteFileAtomically(link, "report\n").ok());
  EXPECT_TRUE(IsRegularFile(link));
  EXPECT_FALSE(IsSymlink(link));
  EXPECT_EQ(ReadFileOrDie(link), "report\n");
  EXPECT_EQ(ReadFileOrDie(victim), "precious\n");
  EXPECT_THAT(dir.List(), ElementsAre("report.txt", "victim"));
}

TEST(WriteFileAtomically, DoesNotCreateTheTargetOfADanglingSymlink) {
  TempDir dir;
  const std::string victim = dir.Path("victim");
  const std::string link = dir.Path("report.txt");
  ASSERT_EQ(::symlink(victim.c_str(), link.c_str()), 0);
  ASSERT_TRUE(WriteFileAtomically(link, "report\n").ok());
  EXPECT_TRUE(IsRegularFile(link));
  EXPECT_FALSE(Exists(victim));
  EXPECT_THAT(dir.List(), ElementsAre("report.txt"));
}

TEST(WriteFileAtomically, ReplacesASymlinkToADirectoryAndLeavesTheDirectory) {
  TempDir dir;
  const std::string sub = dir.Path("sub");
  ASSERT_EQ(::mkdir(sub.c_str(), 0755), 0);
  const std::string link = dir.Path("report.txt");
  ASSERT_EQ(::symlink(sub.c_str(), link.c_str()), 0);
  ASSERT_TRUE(WriteFileAtomically(link, "report\n").ok());
  EXPECT_TRUE(IsRegularFile(link));
  EXPECT_TRUE(std::filesystem::is_directory(sub));
  EXPECT_TRUE(std::filesystem::is_empty(sub));
}

}  // namespace
}  // namespace gpuidle::internal
