// Rewriting a file in place (core/atomic_file.h): what is replaced, what is refused, and that a
// reader never sees part of a file.
#include "core/atomic_file.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
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

mode_t TypeOf(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? (st.st_mode & S_IFMT) : 0;
}

TEST(WriteFileAtomically, CreatesTheFileAndLeavesNoTemporary) {
  TempDir dir;
  const std::string path = dir.Path("gpuidle.prom");
  ASSERT_TRUE(WriteFileAtomically(path, "gpuidle_up 1\n").ok());
  EXPECT_EQ(ReadFileOrDie(path), "gpuidle_up 1\n");
  EXPECT_THAT(dir.List(), ElementsAre("gpuidle.prom"));
}

TEST(WriteFileAtomically, ReplacesItsOwnFileEveryTime) {
  TempDir dir;
  const std::string path = dir.Path("gpuidle.prom");
  for (int i = 0; i < 20; ++i) {
    const absl::Status status = WriteFileAtomically(path, absl::StrCat("write ", i, "\n"));
    ASSERT_TRUE(status.ok()) << status;
  }
  EXPECT_EQ(ReadFileOrDie(path), "write 19\n");
  EXPECT_THAT(dir.List(), ElementsAre("gpuidle.prom"));
}

TEST(WriteFileAtomically, KeepsTheModeOfTheFileItReplaces) {
  TempDir dir;
  const std::string path = dir.Write("summary.txt", "old\n");
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  ASSERT_TRUE(WriteFileAtomically(path, "new\n").ok());
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(ReadFileOrDie(path), "new\n");
}

TEST(WriteFileAtomically, NeverReplacesOrWritesThroughASymlink) {
  TempDir dir;
  const std::string target = dir.Write("target", "keep me\n");
  const std::string link = dir.Path("gpuidle.prom");
  ASSERT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  const std::string dangling = dir.Path("dangling.prom");
  ASSERT_EQ(::symlink(dir.Path("nowhere").c_str(), dangling.c_str()), 0);
  for (const std::string& path : {link, dangling}) {
    const absl::Status status = WriteFileAtomically(path, "x\n");
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << path;
    EXPECT_THAT(status.message(), HasSubstr("symbolic link"));
    EXPECT_EQ(TypeOf(path), S_IFLNK);
  }
  EXPECT_EQ(ReadFileOrDie(target), "keep me\n");
  EXPECT_THAT(dir.List(), ElementsAre("dangling.prom", "gpuidle.prom", "target"));
}

TEST(WriteFileAtomically, NeverReplacesADirectoryFifoSocketOrDevice) {
  TempDir dir;
  const std::string directory = dir.Path("dir.prom");
  ASSERT_EQ(::mkdir(directory.c_str(), 0755), 0);
  const std::string fifo = dir.Path("fifo.prom");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0666), 0);
  const std::string socket_path = dir.Path("sock.prom");
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(socket_path.size(), sizeof(addr.sun_path));
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  // mknod needs CAP_MKNOD; without it the real /dev/null is checked (refusal only).
  std::string device = dir.Path("null.prom");
  if (::mknod(device.c_str(), S_IFCHR | 0666, ::makedev(1, 3)) != 0) device = "/dev/null";

  for (const std::string& path : {directory, fifo, socket_path, device}) {
    const absl::Status status = WriteFileAtomically(path, "x\n");
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << path << ": " << status;
  }
  EXPECT_EQ(TypeOf(directory), S_IFDIR);
  EXPECT_EQ(TypeOf(fifo), S_IFIFO);
  EXPECT_EQ(TypeOf(socket_path), S_IFSOCK);
  EXPECT_EQ(TypeOf(device), S_IFCHR);
  EXPECT_EQ(TypeOf("/dev/null"), S_IFCHR);
  ::close(fd);
  EXPECT_EQ(ListDir(directory).size(), 0u);
  EXPECT_EQ(dir.List().size(), device == "/dev/null" ? 3u : 4u);  // no temporary left
}

// rename() needs only the directory's permission: another user's file, even one anybody may
// write, is not gpuidle's to replace. (As root, chown makes such a file; otherwise skipped.)
TEST(WriteFileAtomically, NeverReplacesAnotherUsersFile) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give a file to another user";
  TempDir dir;
  const std::string path = dir.Write("gpuidle.prom", "someone else's\n");
  ASSERT_EQ(::chmod(path.c_str(), 0666), 0);
  ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);
  const absl::Status status = WriteFileAtomically(path, "x\n");
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("another user"));
  EXPECT_EQ(ReadFileOrDie(path), "someone else's\n");
  EXPECT_THAT(dir.List(), ElementsAre("gpuidle.prom"));
}

TEST(WriteFileAtomically, AMissingDirectoryIsNotFoundAndCreatesNothing) {
  TempDir dir;
  const absl::Status status = WriteFileAtomically(dir.Path("missing/gpuidle.prom"), "x\n");
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(status.message(), HasSubstr("missing/gpuidle.prom"));
  EXPECT_TRUE(dir.List().empty());
}

// The file size limit binds root too: the write fails half-way.
TEST(WriteFileAtomically, AFailedWriteKeepsTheOldFileAndNoTemporary) {
  TempDir dir;
  const std::string path = dir.Write("gpuidle.prom", "old\n");
  struct rlimit old_limit {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  struct rlimit small = old_limit;
  small.rlim_cur = 4096;
  void (*old_handler)(int) = ::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const absl::Status replaced = WriteFileAtomically(path, std::string(64 << 10, 'x'));
  const absl::Status created =
      WriteFileAtomically(dir.Path("new.prom"), std::string(64 << 10, 'x'));
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  ::signal(SIGXFSZ, old_handler);
  EXPECT_THAT(replaced.message(), HasSubstr("write failed"));
  EXPECT_THAT(created.message(), HasSubstr("write failed"));
  EXPECT_EQ(ReadFileOrDie(path), "old\n");
  EXPECT_THAT(dir.List(), ElementsAre("gpuidle.prom"));
}

// What node_exporter sees while gpuidle rewrites: one whole version or the other, never a mix,
// never an empty or missing file.
TEST(WriteFileAtomically, AReaderSeesAWholeVersionEveryTime) {
  TempDir dir;
  const std::string path = dir.Path("gpuidle.prom");
  const std::string a(100'000, 'a');
  const std::string b(100'000, 'b');
  ASSERT_TRUE(WriteFileAtomically(path, a).ok());
  std::atomic<bool> done{false};
  std::atomic<int> reads{0};
  std::atomic<int> torn{0};
  std::thread reader([&] {
    while (!done.load() || reads.load() < 10) {
      const std::string seen = ReadFileOrDie(path);
      if (seen != a && seen != b) torn.fetch_add(1);
      reads.fetch_add(1);
    }
  });
  for (int i = 0; i < 50; ++i) {
    const absl::Status status = WriteFileAtomically(path, i % 2 == 0 ? b : a);
    EXPECT_TRUE(status.ok()) << status;
  }
  done.store(true);
  reader.join();
  EXPECT_EQ(torn.load(), 0) << "of " << reads.load() << " reads";
  EXPECT_THAT(dir.List(), ElementsAre("gpuidle.prom"));
}

}  // namespace
}  // namespace gpuidle::internal
