#include "core/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

namespace gpuidle::internal {
namespace {

absl::Status Error(const std::string& path, absl::string_view what, int err) {
  std::string message = absl::StrCat("cannot write ", path, ": ", what);
  if (err != 0) absl::StrAppend(&message, ": ", std::strerror(err));
  return absl::UnavailableError(message);
}

}  // namespace

absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return Error(path, "it is a directory", 0);
  }
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  std::string tmpl = absl::StrCat(dir, slash == std::string::npos ? "/" : "", ".", base,
                                  ".tmp.XXXXXX");
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  const int fd = ::mkostemp(name.data(), O_CLOEXEC);  // O_EXCL: never an existing file
  if (fd < 0) return Error(path, "cannot create a temporary file", errno);
  const char* p = contents.data();
  size_t left = contents.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      ::unlink(name.data());
      return Error(path, "write failed", err);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  // The report is readable like any file the user creates (mkstemp makes it 0600).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(name.data());
    return Error(path, "close failed", err);
  }
  if (::rename(name.data(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(name.data());
    return Error(path, "rename failed", err);
  }
  return absl::OkStatus();
}

}  // namespace gpuidle::internal
