// The output rules against each kind of target (core/output_file.h): new names, regular files,
// links (to files, to directories, dangling), directories, FIFOs, sockets, devices, read-only
// files, inputs; as root and, in a child process, as an unprivileged user.
#include "core/output_file.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ingest/byte_source.h"
#include "testing/temp_dir.h"

namespace gpuidle::internal {
namespace {

using ::gpuidle::testing::ListDir;
using ::gpuidle::testing::ReadFileOrDie;
using ::gpuidle::testing::TempDir;
using ::testing::AnyOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

constexpr IfExists kAllModes[] = {IfExists::kFail, IfExists::kUseAnotherName, IfExists::kReplace};

OutputFileOptions Mode(IfExists if_exists, int64_t pid = 77) {
  OutputFileOptions o;
  o.if_exists = if_exists;
  o.pid = pid;
  return o;
}

const char* Name(IfExists m) {
  return m == IfExists::kFail ? "fail" : m == IfExists::kReplace ? "replace" : "another name";
}

mode_t TypeOf(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? (st.st_mode & S_IFMT) : 0;
}

std::string Message(const absl::StatusOr<std::string>& s) {
  return std::string(s.status().message());
}

// What a file holds after inflating it if it is gzip (the readers' rule: by content).
std::string Inflated(const std::string& path) {
  absl::StatusOr<std::unique_ptr<ByteSource>> source = OpenByteSource(path);
  EXPECT_TRUE(source.ok()) << source.status();
  if (!source.ok()) return "";
  std::string out;
  char buffer[4096];
  for (;;) {
    absl::StatusOr<size_t> n = (*source)->Read(buffer, sizeof(buffer));
    EXPECT_TRUE(n.ok()) << n.status();
    if (!n.ok() || *n == 0) return out;
    out.append(buffer, *n);
  }
}

// Runs body in a child process as the unprivileged user nobody; the child's expectations
// fail the test through its exit status.
void AsUnprivilegedUser(const std::function<bool()>& body) {
  if (::geteuid() != 0) {
    ASSERT_TRUE(body());
    return;
  }
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(3);
    ::_exit(body() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: an expectation failed as nobody; 3: no setuid";
}

// --- new files ---

TEST(WriteOutputFile, WritesANewFileCompletelyAndLeavesNoTemporary) {
  TempDir dir;
  std::string contents(8 << 20, '\0');
  for (size_t i = 0; i < contents.size(); ++i) contents[i] = static_cast<char>(i * 131 % 251);
  for (IfExists m : kAllModes) {
    const std::string path = dir.Path(absl::StrCat("new.", static_cast<int>(m), ".bin"));
    const absl::StatusOr<std::string> written = WriteOutputFile(path, contents, Mode(m));
    ASSERT_TRUE(written.ok()) << Name(m) << ": " << written.status();
    EXPECT_EQ(*written, path);
    EXPECT_EQ(ReadFileOrDie(path), contents);
  }
  EXPECT_EQ(dir.List().size(), 3u);
}

TEST(WriteOutputFile, WritesAnEmptyFile) {
  TempDir dir;
  ASSERT_TRUE(WriteOutputFile(dir.Path("empty.txt"), "", {}).ok());
  EXPECT_EQ(TypeOf(dir.Path("empty.txt")), S_IFREG);
  EXPECT_EQ(ReadFileOrDie(dir.Path("empty.txt")), "");
}

TEST(WriteOutputFile, CreatesFilesWithTheModeTheUmaskAllows) {
  TempDir dir;
  const mode_t old_mask = ::umask(027);
  const absl::StatusOr<std::string> written = WriteOutputFile(dir.Path("r.txt"), "x", {});
  ::umask(old_mask);
  ASSERT_TRUE(written.ok()) << written.status();
  struct stat st {};
  ASSERT_EQ(::stat(written->c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}

TEST(WriteOutputFile, WritesToARelativePath) {
  TempDir dir;
  const std::filesystem::path old = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  const absl::StatusOr<std::string> first =
      WriteOutputFile("plain.txt", "1", Mode(IfExists::kUseAnotherName, 3));
  const absl::StatusOr<std::string> second =
      WriteOutputFile("plain.txt", "2", Mode(IfExists::kUseAnotherName, 3));
  std::filesystem::current_path(old);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(*first, "plain.txt");
  EXPECT_EQ(*second, "plain.3.txt");
  EXPECT_THAT(dir.List(), ElementsAre("plain.3.txt", "plain.txt"));
}

TEST(WriteOutputFile, WritesAFileWhoseNameHasTheLongestAllowedLength) {
  TempDir dir;
  const std::string name(255, 'r');  // NAME_MAX on Linux file systems
  ASSERT_TRUE(WriteOutputFile(dir.Path(name), "long\n", {}).ok());
  EXPECT_THAT(dir.List(), ElementsAre(name));
}

TEST(WriteOutputFile, CompressesAGzName) {
  TempDir dir;
  const std::string text = "{\"schema\": \"gpuidle.report/2\"}\n";
  for (const char* name : {"r.json.gz", "R.JSON.GZ"}) {
    const absl::StatusOr<std::string> written = WriteOutputFile(dir.Path(name), text, {});
    ASSERT_TRUE(written.ok()) << written.status();
    const std::string raw = ReadFileOrDie(*written);
    ASSERT_GE(raw.size(), 2u);
    EXPECT_EQ(raw.substr(0, 2), "\x1f\x8b") << name;
    EXPECT_EQ(Inflated(*written), text);
  }
  EXPECT_EQ(ReadFileOrDie(*WriteOutputFile(dir.Path("plain.json"), text, {})), text);
}

TEST(WriteOutputFile, StreamedContentsArriveWholeAndCompressedPieceByPiece) {
  TempDir dir;
  std::string text;  // several deflate buffers' worth of compressed output
  for (int i = 0; i < 200'000; ++i) absl::StrAppend(&text, i, " ", i * 7919 % 10007, "\n");
  for (const char* name : {"t.json", "t.json.gz"}) {
    const absl::StatusOr<std::string> written = WriteOutputFileStreamed(
        dir.Path(name),
        [&](OutputStream& out) -> absl::Status {
          for (size_t at = 0; at < text.size(); at += 4093) {
            GPUIDLE_RETURN_IF_ERROR(out.Write(absl::string_view(text).substr(at, 4093)));
          }
          return absl::OkStatus();
        },
        {});
    ASSERT_TRUE(written.ok()) << written.status();
    EXPECT_EQ(absl::EndsWith(name, ".gz") ? Inflated(*written) : ReadFileOrDie(*written), text);
  }
}

TEST(WriteOutputFile, AProducersErrorIsReturnedAndLeavesNothingBehind) {
  TempDir dir;
  for (const char* name : {"t.json", "t.json.gz"}) {
    const absl::StatusOr<std::string> written =
        WriteOutputFileStreamed(dir.Path(name),
                                [](OutputStream& out) -> absl::Status {
                                  GPUIDLE_RETURN_IF_ERROR(out.Write("{\"half\": "));
                                  return absl::CancelledError("stopped");
                                },
                                {});
    EXPECT_EQ(written.status().code(), absl::StatusCode::kCancelled) << name;
    EXPECT_THAT(dir.List(), IsEmpty()) << name;
  }
}

TEST(WriteOutputFile, RefusesACompressionItDoesNotWrite) {
  TempDir dir;
  for (const char* name : {"r.json.xz", "r.json.bz2", "r.json.zst"}) {
    const absl::StatusOr<std::string> written = WriteOutputFile(dir.Path(name), "x", {});
    EXPECT_EQ(written.status().code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_THAT(Message(written), HasSubstr("gzip"));
  }
  EXPECT_THAT(dir.List(), IsEmpty());
}

TEST(WriteOutputFile, RefusesAnEmptyNameAndANulByte) {
  EXPECT_EQ(WriteOutputFile("", "x", {}).status().code(), absl::StatusCode::kInvalidArgument);
  TempDir dir;
  const absl::StatusOr<std::string> written =
      WriteOutputFile(dir.Path(std::string("a\0b", 3)), "x", Mode(IfExists::kReplace));
  EXPECT_EQ(written.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(dir.List(), IsEmpty());
}

// --- an existing regular file ---

TEST(WriteOutputFile, AnExistingFileIsRefusedByDefault) {
  TempDir dir;
  const std::string path = dir.Write("report.json", "old\n");
  const absl::StatusOr<std::string> written = WriteOutputFile(path, "new\n", {});
  EXPECT_EQ(written.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(Message(written), "cannot write " + path + ": it exists");
  EXPECT_TRUE(ReplaceableIfAsked(written.status()));
  // Not for what kReplace would refuse too.
  ASSERT_EQ(::chmod(path.c_str(), 0444), 0);
  EXPECT_FALSE(ReplaceableIfAsked(WriteOutputFile(path, "new\n", {}).status()));
  EXPECT_EQ(ReadFileOrDie(path), "old\n");
  EXPECT_THAT(dir.List(), ElementsAre("report.json"));
}

TEST(WriteOutputFile, LiveOutputsTakeTheNextFreeName) {
  TempDir dir;
  const std::string path = dir.Write("report.json", "first\n");
  std::vector<std::string> written;
  for (const char* text : {"second\n", "third\n", "fourth\n"}) {
    const absl::StatusOr<std::string> w =
        WriteOutputFile(path, text, Mode(IfExists::kUseAnotherName, 12345));
    ASSERT_TRUE(w.ok()) << w.status();
    written.push_back(*w);
  }
  EXPECT_THAT(written, ElementsAre(dir.Path("report.12345.json"), dir.Path("report.12345-2.json"),
                                   dir.Path("report.12345-3.json")));
  EXPECT_EQ(ReadFileOrDie(path), "first\n");
  EXPECT_EQ(ReadFileOrDie(written[2]), "fourth\n");
  const absl::StatusOr<std::string> gz =
      WriteOutputFile(dir.Write("trace.json.gz", "old"), "new", Mode(IfExists::kUseAnotherName));
  ASSERT_TRUE(gz.ok()) << gz.status();
  EXPECT_EQ(*gz, dir.Path("trace.77.json.gz"));
}

TEST(WriteOutputFile, ReplacesARegularFileWhenAskedKeepingItsMode) {
  TempDir dir;
  const std::string path = dir.Write("report.txt", "an old and rather long report\n");
  ASSERT_EQ(::chmod(path.c_str(), 0604), 0);
  const absl::StatusOr<std::string> written =
      WriteOutputFile(path, "new\n", Mode(IfExists::kReplace));
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(ReadFileOrDie(path), "new\n");
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0604u);
  EXPECT_THAT(dir.List(), ElementsAre("report.txt"));
}

TEST(WriteOutputFile, AReplacedFilesSetuidBitDoesNotCarryOver) {
  TempDir dir;
  const std::string path = dir.Write("report.txt", "old\n");
  ASSERT_EQ(::chmod(path.c_str(), 04755), 0);
  ASSERT_TRUE(WriteOutputFile(path, "new\n", Mode(IfExists::kReplace)).ok());
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
}

TEST(WriteOutputFile, NeverReplacesAReadOnlyFileNotEvenAsRoot) {
  TempDir dir;
  const std::string path = dir.Write("report.txt", "keep\n");
  ASSERT_EQ(::chmod(path.c_str(), 0444), 0);
  const absl::StatusOr<std::string> written =
      WriteOutputFile(path, "new\n", Mode(IfExists::kReplace));
  EXPECT_EQ(written.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Message(written), HasSubstr("read-only"));
  EXPECT_EQ(ReadFileOrDie(path), "keep\n");
  EXPECT_THAT(dir.List(), ElementsAre("report.txt"));
}

TEST(WriteOutputFile, NeverWritesOverAnInputWhateverTheMode) {
  TempDir dir;
  const std::string input = dir.Write("t.json.gz", "the trace");
  const std::string hard_link = dir.Path("same-inode.json");
  ASSERT_EQ(::link(input.c_str(), hard_link.c_str()), 0);
  for (IfExists m : kAllModes) {
    OutputFileOptions o = Mode(m);
    o.inputs = {dir.Path("other.json"), input};
    for (const std::string& target : {input, hard_link}) {
      const absl::StatusOr<std::string> written = WriteOutputFile(target, "report", o);
      EXPECT_EQ(written.status().code(), absl::StatusCode::kInvalidArgument) << Name(m);
      EXPECT_THAT(Message(written), HasSubstr("one of the inputs"));
    }
  }
  EXPECT_EQ(ReadFileOrDie(input), "the trace");
  EXPECT_THAT(dir.List(), ElementsAre("same-inode.json", "t.json.gz"));
}

// --- things that are not regular files ---

TEST(WriteOutputFile, NeverWritesThroughOrReplacesASymlink) {
  for (IfExists m : kAllModes) {
    TempDir dir;
    const std::string victim = dir.Write("victim", "precious\n");
    const std::string link = dir.Path("report.txt");
    ASSERT_EQ(::symlink(victim.c_str(), link.c_str()), 0);
    const absl::StatusOr<std::string> written = WriteOutputFile(link, "report\n", Mode(m, 9));
    EXPECT_EQ(TypeOf(link), S_IFLNK) << Name(m);
    EXPECT_EQ(ReadFileOrDie(victim), "precious\n") << Name(m);
    if (m == IfExists::kUseAnotherName) {
      ASSERT_TRUE(written.ok()) << written.status();
      EXPECT_EQ(*written, dir.Path("report.9.txt"));
      EXPECT_EQ(ReadFileOrDie(*written), "report\n");
    } else {
      EXPECT_FALSE(written.ok()) << Name(m);
      EXPECT_THAT(Message(written), HasSubstr("symbolic link")) << Name(m);
      EXPECT_THAT(dir.List(), ElementsAre("report.txt", "victim")) << Name(m);
    }
  }
}

TEST(WriteOutputFile, NeverCreatesTheTargetOfADanglingSymlink) {
  for (IfExists m : kAllModes) {
    TempDir dir;
    const std::string victim = dir.Path("victim");
    const std::string link = dir.Path("report.txt");
    ASSERT_EQ(::symlink(victim.c_str(), link.c_str()), 0);
    const absl::StatusOr<std::string> written = WriteOutputFile(link, "report\n", Mode(m, 9));
    EXPECT_EQ(written.ok(), m == IfExists::kUseAnotherName) << Name(m);
    EXPECT_FALSE(std::filesystem::exists(victim)) << Name(m);
    EXPECT_EQ(TypeOf(link), S_IFLNK) << Name(m);
  }
}

TEST(WriteOutputFile, NeverReplacesASymlinkToADirectory) {
  TempDir dir;
  const std::string sub = dir.Path("sub");
  ASSERT_EQ(::mkdir(sub.c_str(), 0755), 0);
  const std::string link = dir.Path("report.txt");
  ASSERT_EQ(::symlink(sub.c_str(), link.c_str()), 0);
  EXPECT_FALSE(WriteOutputFile(link, "report\n", Mode(IfExists::kReplace)).ok());
  EXPECT_EQ(TypeOf(link), S_IFLNK);
  EXPECT_TRUE(std::filesystem::is_empty(sub));
}

TEST(WriteOutputFile, RefusesADirectoryInEveryMode) {
  TempDir dir;
  const std::string sub = dir.Path("out");
  ASSERT_EQ(::mkdir(sub.c_str(), 0755), 0);
  for (IfExists m : kAllModes) {
    for (const std::string& path : {sub, sub + "/"}) {
      const absl::StatusOr<std::string> written = WriteOutputFile(path, "x", Mode(m));
      ASSERT_FALSE(written.ok()) << path;
      EXPECT_THAT(Message(written), StartsWith("cannot write " + path));
      EXPECT_THAT(Message(written), HasSubstr("is a directory"));
    }
  }
  EXPECT_TRUE(std::filesystem::is_empty(sub));
}

// A FIFO is never opened (that would block), a socket never replaced.
TEST(WriteOutputFile, NeverReplacesAFifoOrASocket) {
  TempDir dir;
  const std::string fifo = dir.Path("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const std::string socket_path = dir.Path("sock");
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(socket_path.size(), sizeof(addr.sun_path));
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  for (IfExists m : {IfExists::kFail, IfExists::kReplace}) {
    for (const std::string& path : {fifo, socket_path}) {
      const absl::StatusOr<std::string> written = WriteOutputFile(path, "x", Mode(m));
      EXPECT_FALSE(written.ok()) << path << " " << Name(m);
      EXPECT_THAT(Message(written), HasSubstr("regular files"));
    }
  }
  EXPECT_EQ(TypeOf(fifo), S_IFIFO);
  EXPECT_EQ(TypeOf(socket_path), S_IFSOCK);
  ::close(fd);
  EXPECT_THAT(dir.List(), ElementsAre("fifo", "sock"));
}

// The bug that turned /dev/null into a regular file when run as root: a device node is never
// replaced. (mknod needs CAP_MKNOD; without it the real /dev/null is checked, refusal only.)
TEST(WriteOutputFile, NeverReplacesADeviceNode) {
  TempDir dir;
  std::string device = dir.Path("null");
  if (::mknod(device.c_str(), S_IFCHR | 0666, ::makedev(1, 3)) != 0) device = "/dev/null";
  const absl::StatusOr<std::string> written =
      WriteOutputFile(device, "x", Mode(IfExists::kReplace));
  EXPECT_EQ(written.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Message(written), HasSubstr("a device"));
  EXPECT_EQ(TypeOf(device), S_IFCHR);
  EXPECT_EQ(TypeOf("/dev/null"), S_IFCHR);
}

// --- failures leave everything as it was ---

TEST(WriteOutputFile, FailsInAMissingDirectoryOrUnderAFileAndCreatesNothing) {
  TempDir dir;
  const std::string file = dir.Write("file", "keep me\n");
  for (IfExists m : kAllModes) {
    absl::StatusOr<std::string> written = WriteOutputFile(dir.Path("missing/r.json"), "x", Mode(m));
    EXPECT_THAT(Message(written), HasSubstr("No such file or directory"));
    written = WriteOutputFile(file + "/r.json", "x", Mode(m));
    EXPECT_THAT(Message(written), HasSubstr("Not a directory"));
  }
  EXPECT_EQ(ReadFileOrDie(file), "keep me\n");
  EXPECT_THAT(dir.List(), ElementsAre("file"));
}

TEST(WriteOutputFile, FailsWhenTheAlternativeNameIsTooLongAndLeavesNothingBehind) {
  TempDir dir;
  const std::string name(255, 'r');  // NAME_MAX: the name with the pid added is too long
  const std::string path = dir.Write(name, "old");
  const absl::StatusOr<std::string> written =
      WriteOutputFile(path, "new", Mode(IfExists::kUseAnotherName, 123));
  EXPECT_THAT(Message(written), HasSubstr("File name too long"));
  EXPECT_EQ(ReadFileOrDie(path), "old");
  EXPECT_THAT(dir.List(), ElementsAre(name));
}

// The file size limit binds root too.
TEST(WriteOutputFile, KeepsTheOldFileAndNoTemporaryWhenTheWriteFails) {
  TempDir dir;
  const std::string path = dir.Write("report.txt", "old report\n");
  struct rlimit old_limit {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  struct rlimit small = old_limit;
  small.rlim_cur = 4096;
  void (*old_handler)(int) = ::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  std::vector<absl::StatusOr<std::string>> results;
  for (IfExists m : kAllModes) {
    results.push_back(WriteOutputFile(path, std::string(64 << 10, 'x'), Mode(m)));
    results.push_back(WriteOutputFile(dir.Path("new.txt"), std::string(64 << 10, 'x'), Mode(m)));
  }
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  ::signal(SIGXFSZ, old_handler);
  for (const absl::StatusOr<std::string>& r : results) {
    EXPECT_FALSE(r.ok());
    EXPECT_THAT(Message(r), AnyOf(HasSubstr("write failed"), HasSubstr("it exists")));
  }
  EXPECT_EQ(ReadFileOrDie(path), "old report\n");
  EXPECT_THAT(dir.List(), ElementsAre("report.txt"));
}

TEST(WriteOutputFile, GivesEveryWriterOfOneNameItsOwnFile) {
  TempDir dir;
  const std::string path = dir.Path("report.json");
  std::vector<std::string> written;
  for (int i = 0; i < 20; ++i) {
    const absl::StatusOr<std::string> w =
        WriteOutputFile(path, absl::StrCat(i), Mode(IfExists::kUseAnotherName, 555));
    ASSERT_TRUE(w.ok()) << w.status();
    written.push_back(*w);
  }
  EXPECT_EQ(dir.List().size(), 20u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(ReadFileOrDie(written[i]), absl::StrCat(i));
}

// --- as an unprivileged user ---

TEST(WriteOutputFile, AsAnUnprivilegedUserTheFilesOwnPermissionDecides) {
  TempDir dir;
  ASSERT_EQ(::chmod(dir.path().c_str(), 0777), 0);  // nobody may create and rename here
  const std::string others = dir.Write("others.txt", "not yours\n");
  ASSERT_EQ(::chmod(others.c_str(), 0644), 0);  // owned by root (or you), read-only for nobody
  const std::string shared = dir.Write("shared.txt", "old\n");
  ASSERT_EQ(::chmod(shared.c_str(), 0666), 0);
  const std::string sub = dir.Path("ro");
  ASSERT_EQ(::mkdir(sub.c_str(), 0755), 0);  // nobody may not write here
  AsUnprivilegedUser([&] {
    const absl::StatusOr<std::string> refused =
        WriteOutputFile(others, "new\n", Mode(IfExists::kReplace));
    const absl::StatusOr<std::string> replaced =
        WriteOutputFile(shared, "new\n", Mode(IfExists::kReplace));
    const absl::StatusOr<std::string> denied = WriteOutputFile(sub + "/r.json", "x", {});
    return absl::IsFailedPrecondition(refused.status()) &&
           Message(refused).find("read-only") != std::string::npos && replaced.ok() &&
           Message(denied).find("Permission denied") != std::string::npos;
  });
  EXPECT_EQ(ReadFileOrDie(others), "not yours\n");
  EXPECT_EQ(ReadFileOrDie(shared), "new\n");
  EXPECT_THAT(ListDir(sub), IsEmpty());
  EXPECT_THAT(dir.List(), ElementsAre("others.txt", "ro", "shared.txt"));
}

}  // namespace
}  // namespace gpuidle::internal
