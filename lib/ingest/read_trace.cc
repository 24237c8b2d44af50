#include "ingest/read_trace.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/out_of_memory.h"
#include "core/status_macros.h"
#include "ingest/byte_source.h"
#include "ingest/kineto_reader.h"

namespace gpuidle::internal {
namespace {

absl::StatusOr<Timeline> ReadTraceFileOrThrow(const std::string& path) {
  GPUIDLE_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, OpenByteSource(path));
  // Reading and inflating overlap parsing on a second thread.
  absl::StatusOr<Timeline> timeline = ReadKinetoTrace(*ReadAhead(std::move(source)));
  // The reader does not know the path; its messages never name it (a message that merely
  // starts like the path, e.g. "not JSON" for a file called "n", still needs it).
  if (!timeline.ok()) {
    return absl::Status(timeline.status().code(),
                        absl::StrCat(path, ": ", timeline.status().message()));
  }
  return timeline;
}

// The names tensorboard_trace_handler gives its files.
constexpr absl::string_view kTraceSuffixes[] = {".pt.trace.json", ".pt.trace.json.gz"};

// One trace file of a directory: "<worker>.<time>.pt.trace.json[.gz]".
struct ProfilerTraceFile {
  std::string name;
  std::string worker;
  std::string time;  // the digits of <time>, without leading zeros; empty where there are none
  int64_t modified_ns = 0;
};

// Whether a was written after b: by the time in the names where both have one (compared as
// decimal numbers of any length), else by the modification time; the name decides a tie.
bool WrittenAfter(const ProfilerTraceFile& a, const ProfilerTraceFile& b) {
  if (!a.time.empty() && !b.time.empty() && a.time != b.time) {
    if (a.time.size() != b.time.size()) return a.time.size() > b.time.size();
    return a.time > b.time;
  }
  if ((a.time.empty() || b.time.empty()) && a.modified_ns != b.modified_ns) {
    return a.modified_ns > b.modified_ns;
  }
  return a.name > b.name;
}

bool IsDigits(absl::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char c) { return absl::ascii_isdigit(c); });
}

absl::Status ListError(int err, const std::string& dir) {
  const std::string message =
      absl::StrCat(dir, ": cannot list the directory: ", std::strerror(err));
  if (err == ENOENT || err == ENOTDIR) return absl::NotFoundError(message);
  if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(message);
  return absl::UnavailableError(message);
}

}  // namespace

absl::StatusOr<Timeline> ReadTraceFile(const std::string& path) {
  // The reader turns running out of memory into an error; opening the file and starting the
  // read-ahead allocate too.
  return OutOfMemoryIsAnErrorWith(
      [&] { return ReadTraceFileOrThrow(path); },
      [&] { return absl::StrCat(path, ": out of memory while reading the trace"); });
}

absl::StatusOr<ProfilerTraceDirectory> FindProfilerTraces(const std::string& dir) {
  const std::unique_ptr<DIR, int (*)(DIR*)> listing(::opendir(dir.c_str()), ::closedir);
  if (listing == nullptr) return ListError(errno, dir);
  const std::string prefix = absl::EndsWith(dir, "/") ? dir : absl::StrCat(dir, "/");
  ProfilerTraceDirectory found;
  std::map<std::string, std::vector<ProfilerTraceFile>> by_worker;
  for (;;) {
    errno = 0;
    const dirent* entry = ::readdir(listing.get());
    if (entry == nullptr) {
      if (errno != 0) return ListError(errno, dir);
      break;
    }
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    ProfilerTraceFile file;
    file.name = name;
    absl::string_view stem;
    for (absl::string_view suffix : kTraceSuffixes) {
      if (absl::EndsWith(name, suffix)) {
        stem = absl::string_view(name).substr(0, name.size() - suffix.size());
      }
    }
    struct stat st {};
    // A link to a trace is a trace; a directory or a device named like one is not.
    if (stem.empty() || ::stat(absl::StrCat(prefix, name).c_str(), &st) != 0 ||
        !S_ISREG(st.st_mode)) {
      found.ignored.push_back(name);
      continue;
    }
    file.modified_ns = int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
    const size_t dot = stem.rfind('.');
    if (dot != absl::string_view::npos && IsDigits(stem.substr(dot + 1))) {
      file.worker = std::string(stem.substr(0, dot));
      absl::string_view time = stem.substr(dot + 1);
      while (time.size() > 1 && time[0] == '0') time.remove_prefix(1);
      file.time = std::string(time);
    } else {
      file.worker = std::string(stem);
    }
    by_worker[file.worker].push_back(std::move(file));
  }
  for (auto& [worker, files] : by_worker) {
    std::sort(files.begin(), files.end(), WrittenAfter);
    found.taken.push_back(absl::StrCat(prefix, files.front().name));
    for (size_t i = 1; i < files.size(); ++i) found.skipped.push_back(files[i].name);
  }
  std::sort(found.skipped.begin(), found.skipped.end());
  std::sort(found.ignored.begin(), found.ignored.end());
  if (found.taken.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        dir,
        " is a directory with no torch.profiler trace in it (gpuidle reads the "
        "<worker>.<time>.pt.trace.json or .pt.trace.json.gz files of tensorboard_trace_handler "
        "from a directory; give other traces by name)"));
  }
  return found;
}

}  // namespace gpuidle::internal
