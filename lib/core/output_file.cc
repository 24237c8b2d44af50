#include "core/output_file.h"

#include <fcntl.h>
#include <stdio.h>  // renameat2
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/output_path.h"
#include "core/status_macros.h"

namespace gpuidle::internal {
namespace {

// The temporary name adds 22 characters to the target's; a short prefix of it keeps the name
// within NAME_MAX for any target name.
constexpr size_t kTempBaseMax = 200;

// Marks kFail's AlreadyExists for a file that kReplace would replace.
constexpr absl::string_view kReplaceableUrl = "gpuidle.dev/replaceable";

// Enough for thousands of processes of one job writing to one name; more means a loop.
constexpr int kMaxAttempts = 10'000;

// Compressions gpuidle reads from nowhere and writes never: a name that asks for one is refused
// rather than written as plain text under a misleading name.
constexpr const char* kUnwrittenCompressions[] = {".bz2", ".xz", ".zst", ".zstd", ".lz4"};

absl::Status Error(absl::StatusCode code, const std::string& path, absl::string_view what,
                   int err) {
  std::string message = absl::StrCat("cannot write ", path);
  if (!what.empty()) absl::StrAppend(&message, ": ", what);
  if (err != 0) absl::StrAppend(&message, ": ", std::strerror(err));
  return absl::Status(code, message);
}

// The code says what kind of failure it was, so that Python raises FileNotFoundError or
// PermissionError as open() would.
absl::Status SystemError(const std::string& path, absl::string_view what, int err) {
  const absl::StatusCode code = err == ENOENT || err == ENOTDIR ? absl::StatusCode::kNotFound
                                : err == EACCES || err == EPERM || err == EROFS
                                    ? absl::StatusCode::kPermissionDenied
                                    : absl::StatusCode::kUnavailable;
  return Error(code, path, what, err);
}

const char* KindOf(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link (gpuidle never writes through or replaces links)";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (gpuidle writes only regular files)";
  if (S_ISSOCK(mode)) return "a socket (gpuidle writes only regular files)";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device (gpuidle writes only regular files)";
  return "not a regular file";
}

struct FileId {
  dev_t dev;
  ino_t ino;
};

std::optional<FileId> IdOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileId{st.st_dev, st.st_ino};
}

// Creates a new file next to the target, never opening an existing file or following a link.
// Mode 0666 lets the umask decide the permissions, like any file the user creates
// (mkstemp's 0600 would need a umask() round trip, which races with other threads).
int CreateTemporaryFile(const std::string& prefix, std::string* name) {
  static std::atomic<uint64_t> counter{0};
  for (int attempt = 0; attempt < 100; ++attempt) {
    uint64_t random = 0;
    if (::getrandom(&random, sizeof(random), GRND_NONBLOCK) != sizeof(random)) {
      random = static_cast<uint64_t>(::getpid()) << 32 ^
               static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    }
    random ^= counter.fetch_add(1, std::memory_order_relaxed);
    *name = absl::StrCat(prefix, absl::Hex(random, absl::kZeroPad16));
    const int fd =
        ::open(name->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

// Writes to a file descriptor; the first failure is kept and ends the writing.
class FdStream : public OutputStream {
 public:
  FdStream(int fd, const std::string& path) : fd_(fd), path_(path) {}
  absl::Status Write(absl::string_view piece) override {
    const char* p = piece.data();
    size_t left = piece.size();
    while (left > 0) {
      const ssize_t n = ::write(fd_, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return SystemError(path_, "write failed", n < 0 ? errno : EIO);
      p += n;
      left -= static_cast<size_t>(n);
    }
    return absl::OkStatus();
  }

 private:
  int fd_;
  const std::string& path_;
};

// Compresses what it is given into a gzip member, written to `out` as the output fills.
class GzipStream : public OutputStream {
 public:
  GzipStream(OutputStream* out, const std::string& path) : out_(out), path_(path) {
    // windowBits 15 + 16: a gzip header and trailer rather than zlib's.
    started_ = deflateInit2(&z_, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                            Z_DEFAULT_STRATEGY) == Z_OK;
  }
  ~GzipStream() override {
    if (started_) deflateEnd(&z_);
  }
  absl::Status Write(absl::string_view piece) override { return Deflate(piece, Z_NO_FLUSH); }
  absl::Status Finish() { return Deflate({}, Z_FINISH); }

 private:
  absl::Status Deflate(absl::string_view piece, int flush) {
    if (!started_) return Error(absl::StatusCode::kInternal, path_, "cannot start gzip", 0);
    constexpr size_t kPiece = size_t{1} << 30;  // zlib counts in 32 bits: feed in pieces
    do {
      const size_t n = std::min(piece.size(), kPiece);
      z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(piece.data()));
      z_.avail_in = static_cast<uInt>(n);
      piece.remove_prefix(n);
      const int mode = piece.empty() ? flush : Z_NO_FLUSH;
      int rc = Z_OK;
      do {
        z_.next_out = reinterpret_cast<Bytef*>(buffer_);
        z_.avail_out = sizeof(buffer_);
        rc = deflate(&z_, mode);
        if (rc == Z_STREAM_ERROR) {
          return Error(absl::StatusCode::kInternal, path_, "gzip compression failed", 0);
        }
        const size_t made = sizeof(buffer_) - z_.avail_out;
        if (made > 0) GPUIDLE_RETURN_IF_ERROR(out_->Write({buffer_, made}));
      } while (z_.avail_out == 0 || (mode == Z_FINISH && rc != Z_STREAM_END));
    } while (!piece.empty());
    return absl::OkStatus();
  }

  OutputStream* out_;
  const std::string& path_;
  z_stream z_{};
  bool started_ = false;
  char buffer_[1 << 16];
};

// Writes what `produce` gives (gzip-compressed if `gzip`) to a new temporary file in the
// directory of path and syncs it; mode, if given, replaces the umask's permissions (those of a
// file being replaced, without its setuid, setgid and sticky bits). Returns the temporary name; on
// failure nothing is left behind.
absl::StatusOr<std::string> WriteTemporaryFileNextTo(
    const std::string& path, absl::FunctionRef<absl::Status(OutputStream&)> produce, bool gzip,
    std::optional<mode_t> mode) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "./" : path.substr(0, slash + 1);
  const std::string base =
      (slash == std::string::npos ? path : path.substr(slash + 1)).substr(0, kTempBaseMax);
  std::string name;
  const int fd = CreateTemporaryFile(absl::StrCat(dir, ".", base, ".tmp."), &name);
  if (fd < 0) return SystemError(path, "cannot create a temporary file", errno);
  auto fail = [&](absl::string_view what, int err) {
    ::close(fd);
    ::unlink(name.c_str());
    return SystemError(path, what, err);
  };
  // The permissions only: a setuid, setgid or sticky bit of the file replaced never carries
  // over to what gpuidle writes (issue 29).
  if (mode && ::fchmod(fd, *mode & 0777) != 0) return fail("chmod failed", errno);
  FdStream file(fd, path);
  absl::Status written;
  if (gzip) {
    auto compressed = std::make_unique<GzipStream>(&file, path);  // 64 kB: not on the stack
    written = produce(*compressed);
    if (written.ok()) written = compressed->Finish();
  } else {
    written = produce(file);
  }
  if (!written.ok()) {
    ::close(fd);
    ::unlink(name.c_str());
    return written;
  }
  // On disk before it is put into place, so that a crash leaves the old file or the new one,
  // never an empty one.
  if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) return fail("fsync failed", errno);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(name.c_str());
    return SystemError(path, "close failed", err);
  }
  return name;
}

// Gives the finished temporary file the name target without replacing anything; the temporary
// name is removed on success. Returns 0 or errno.
int LinkNew(const std::string& temp, const std::string& target) {
  if (::link(temp.c_str(), target.c_str()) == 0) {
    ::unlink(temp.c_str());
    return 0;
  }
  const int err = errno;
  if (err != EPERM && err != EOPNOTSUPP && err != ENOSYS) return err;
  // File systems without hard links (FAT, some FUSE and network ones): the kernel's
  // no-replace rename is just as atomic where it exists.
  if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, target.c_str(), RENAME_NOREPLACE) == 0) {
    return 0;
  }
  return errno == EINVAL || errno == ENOSYS ? err : errno;
}

// Why gpuidle may not replace what lstat found at path ("it is a FIFO ..."), or "" if it may.
// rename() needs only the directory's permission, so the file's own is checked here: a
// read-only file stays read-only. Root passes access() for any file: its mode bits count.
std::string WhyNotReplaceable(const std::string& path, const struct stat& st) {
  if (!S_ISREG(st.st_mode)) return absl::StrCat("it is ", KindOf(st.st_mode));
  const bool writable =
      ::geteuid() == 0 ? (st.st_mode & 0222) != 0 : ::access(path.c_str(), W_OK) == 0;
  return writable ? "" : "it is read-only";
}

// Puts temp in the place of the regular file found at target (identified by st). Where the
// kernel can exchange two names atomically, what was swapped out is checked to be that very
// file, and swapped back if something else took its place meanwhile: nothing that was not
// checked is ever removed. Returns 0 or errno; on success temp's name is gone.
int ReplaceChecked(const std::string& temp, const std::string& target, const struct stat& st,
                   std::string* why_not) {
  if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
    struct stat swapped {};
    if (::lstat(temp.c_str(), &swapped) == 0 && swapped.st_dev == st.st_dev &&
        swapped.st_ino == st.st_ino) {
      ::unlink(temp.c_str());
      return 0;
    }
    ::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE);
    *why_not = "it changed while gpuidle was writing";
    return EAGAIN;
  }
  if (errno != EINVAL && errno != ENOSYS) return errno;
  return ::rename(temp.c_str(), target.c_str()) == 0 ? 0 : errno;
}

}  // namespace

bool ReplaceableIfAsked(const absl::Status& status) {
  return absl::IsAlreadyExists(status) && status.GetPayload(kReplaceableUrl).has_value();
}

absl::StatusOr<std::string> GzipCompress(absl::string_view contents) {
  z_stream z{};
  // windowBits 15 + 16: a gzip header and trailer rather than zlib's.
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return absl::ResourceExhaustedError("cannot start gzip compression");
  }
  constexpr size_t kPiece = size_t{1} << 30;  // zlib counts in 32 bits: feed and drain in pieces
  std::string out(std::min<size_t>(contents.size() / 4 + 1024, kPiece), '\0');
  size_t offset = 0;
  int rc = Z_OK;
  while (rc == Z_OK) {
    if (z.avail_in == 0 && offset < contents.size()) {
      const size_t n = std::min(contents.size() - offset, kPiece);
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(contents.data() + offset));
      z.avail_in = static_cast<uInt>(n);
      offset += n;
    }
    if (z.total_out == out.size()) out.resize(out.size() * 2);
    z.next_out = reinterpret_cast<Bytef*>(out.data() + z.total_out);
    z.avail_out = static_cast<uInt>(std::min(out.size() - z.total_out, kPiece));
    rc = deflate(&z, offset == contents.size() && z.avail_in == 0 ? Z_FINISH : Z_NO_FLUSH);
    if (rc == Z_BUF_ERROR) rc = Z_OK;  // no progress possible until there is more room
  }
  const size_t size = z.total_out;
  deflateEnd(&z);
  if (rc != Z_STREAM_END) return absl::InternalError("gzip compression failed");
  out.resize(size);
  return out;
}

absl::StatusOr<std::string> WriteOutputFile(const std::string& path, absl::string_view contents,
                                            const OutputFileOptions& options) {
  return WriteOutputFileStreamed(
      path, [contents](OutputStream& out) { return out.Write(contents); }, options);
}

absl::StatusOr<std::string> WriteOutputFileStreamed(
    const std::string& path, absl::FunctionRef<absl::Status(OutputStream&)> produce,
    const OutputFileOptions& options) {
  if (path.empty()) return absl::InvalidArgumentError("cannot write a file with an empty name");
  if (path.find('\0') != std::string::npos) {
    return absl::InvalidArgumentError("cannot write a file whose name holds a NUL byte");
  }
  for (const char* suffix : kUnwrittenCompressions) {
    if (absl::EndsWithIgnoreCase(path, suffix)) {
      return Error(absl::StatusCode::kInvalidArgument, path,
                   absl::StrCat("gpuidle compresses only with gzip (name it .gz), not ", suffix),
                   0);
    }
  }
  struct stat st {};
  const bool exists = ::lstat(path.c_str(), &st) == 0;
  if (path.back() == '/' || (exists && S_ISDIR(st.st_mode))) {
    return Error(absl::StatusCode::kFailedPrecondition, path, "it is a directory", 0);
  }
  if (exists && S_ISREG(st.st_mode)) {
    for (const std::string& input : options.inputs) {
      const std::optional<FileId> id = IdOf(input);
      if (id && id->dev == st.st_dev && id->ino == st.st_ino) {
        return Error(absl::StatusCode::kInvalidArgument, path,
                     absl::StrCat("it is one of the inputs",
                                  input == path ? "" : absl::StrCat(" (", input, ")"),
                                  "; gpuidle never writes over an input"),
                     0);
      }
    }
  }
  std::string why_not;
  if (exists && options.if_exists == IfExists::kFail) {
    if (!S_ISREG(st.st_mode)) {
      return Error(absl::StatusCode::kAlreadyExists, path,
                   absl::StrCat("it is ", KindOf(st.st_mode)), 0);
    }
    why_not = WhyNotReplaceable(path, st);
    absl::Status exists_error =
        Error(absl::StatusCode::kAlreadyExists, path, why_not.empty() ? "it exists" : why_not, 0);
    if (why_not.empty()) exists_error.SetPayload(kReplaceableUrl, absl::Cord("1"));
    return exists_error;
  }
  const bool replace = exists && options.if_exists == IfExists::kReplace;
  if (replace) {
    why_not = WhyNotReplaceable(path, st);
    if (why_not.empty() && options.replace_only_own_files && st.st_uid != ::geteuid()) {
      why_not = "it belongs to another user";
    }
    if (!why_not.empty()) {
      return Error(absl::StatusCode::kFailedPrecondition, path, why_not, 0);
    }
  }

  absl::StatusOr<std::string> temp =
      WriteTemporaryFileNextTo(path, produce, absl::EndsWithIgnoreCase(path, ".gz"),
                               replace ? std::optional<mode_t>(st.st_mode) : std::nullopt);
  if (!temp.ok()) return temp.status();

  if (replace) {
    const int err = ReplaceChecked(*temp, path, st, &why_not);
    if (err == 0) return path;
    ::unlink(temp->c_str());
    return SystemError(path, why_not, why_not.empty() ? err : 0);
  }
  const int attempts = options.if_exists == IfExists::kUseAnotherName ? kMaxAttempts : 1;
  for (int attempt = 0; attempt < attempts; ++attempt) {
    const std::string target = AlternativeOutputPath(path, options.pid, attempt);
    const int err = LinkNew(*temp, target);
    if (err == EEXIST && options.if_exists == IfExists::kUseAnotherName) continue;
    if (err == 0) return target;
    ::unlink(temp->c_str());
    if (err == EEXIST) {
      // Created by someone else between the check above and now.
      return Error(absl::StatusCode::kAlreadyExists, path, "it exists", 0);
    }
    return SystemError(target, "", err);
  }
  ::unlink(temp->c_str());
  return SystemError(path, absl::StrCat("it and ", kMaxAttempts - 1, " alternative names exist"),
                     0);
}

}  // namespace gpuidle::internal
