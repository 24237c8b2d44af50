#include "core/file_util.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace gpuidle::internal {
namespace {

constexpr size_t kTempBaseMax = 200;

absl::Status Error(const std::string& path, absl::string_view what, int err) {
  std::string message = absl::StrCat("cannot write ", path, ": ", what);
  if (err != 0) absl::StrAppend(&message, ": ", std::strerror(err));
  return absl::UnavailableError(message);
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

}  // namespace

absl::StatusOr<std::string> WriteTemporaryFileNextTo(const std::string& path,
                                                     absl::string_view contents) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "./" : path.substr(0, slash + 1);
  // The temporary name adds 22 characters to the target's; a short prefix of it keeps the name
  // within NAME_MAX for any target name.
  const std::string base =
      (slash == std::string::npos ? path : path.substr(slash + 1)).substr(0, kTempBaseMax);
  std::string name;
  const int fd = CreateTemporaryFile(absl::StrCat(dir, ".", base, ".tmp."), &name);
  if (fd < 0) return Error(path, "cannot create a temporary file", errno);
  const char* p = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::close(fd);
      ::unlink(name.c_str());
      return Error(path, "write failed", err);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  // On disk before it is renamed or linked into place, so that a crash leaves the old file or
  // the new one, never an empty one.
  if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) {
    const int err = errno;
    ::close(fd);
    ::unlink(name.c_str());
    return Error(path, "fsync failed", err);
  }
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(name.c_str());
    return Error(path, "close failed", err);
  }
  return name;
}

absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return Error(path, "it is a directory", 0);
  }
  absl::StatusOr<std::string> name = WriteTemporaryFileNextTo(path, contents);
  if (!name.ok()) return name.status();
  if (::rename(name->c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(name->c_str());
    return Error(path, "rename failed", err);
  }
  return absl::OkStatus();
}

}  // namespace gpuidle::internal
