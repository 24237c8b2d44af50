#include "settings/python_site.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace gpuidle::internal {
namespace {

std::string Directory(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string Resolved(const std::string& path) {
  char buffer[PATH_MAX];
  return realpath(path.c_str(), buffer) != nullptr ? std::string(buffer) : std::string();
}

bool HasSiteCustomize(const std::string& dir) {
  struct stat st {};
  const std::string file = dir + "/sitecustomize.py";
  return stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(file.c_str(), R_OK) == 0;
}

}  // namespace

std::string PythonSiteDir(const std::string& library_path) {
  if (library_path.empty()) return {};
  // The library's folder as named (the package's own link to the library), then as resolved
  // (the build tree's lib folder).
  std::vector<std::string> library_dirs = {Directory(library_path)};
  const std::string resolved = Resolved(library_path);
  if (!resolved.empty() && Directory(resolved) != library_dirs[0]) {
    library_dirs.push_back(Directory(resolved));
  }
  for (const std::string& dir : library_dirs) {
    for (const std::string& candidate : {dir + "/_site", dir + "/../python/gpuidle/_site"}) {
      if (!HasSiteCustomize(candidate)) continue;
      const std::string site = Resolved(candidate);
      if (!site.empty()) return site;
    }
  }
  return {};
}

std::string PrependToSearchPath(absl::string_view path, absl::string_view dir) {
  std::vector<std::string> entries = {std::string(dir)};
  if (!path.empty()) {
    for (absl::string_view entry : absl::StrSplit(path, ':')) {
      if (entry != dir) entries.emplace_back(entry);
    }
  }
  return absl::StrJoin(entries, ":");
}

bool SaysNo(const char* value) {
  if (value == nullptr) return false;
  const std::string v = absl::AsciiStrToLower(absl::StripAsciiWhitespace(value));
  return v == "0" || v == "false" || v == "no";
}

}  // namespace gpuidle::internal
