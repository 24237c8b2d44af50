#include "core/output_path.h"

#include <limits.h>
#include <unistd.h>

#include <cstdlib>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/text_safety.h"

namespace gpuidle::internal {
namespace {

// The launchers' rank variables, most specific first: torchrun/torch.distributed, Open MPI,
// MPICH/Intel MPI, Slurm.
constexpr const char* kRankVariables[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
                                          "SLURM_PROCID"};

// A suffix that belongs to the extension before it: "trace.json.gz" is a ".json.gz" file.
constexpr const char* kCompressionSuffixes[] = {".gz", ".bz2", ".xz", ".zst"};

// A value substituted into a path must not add or climb directories: a rank of "../x" or ".."
// stays in place.
void AppendSanitized(absl::string_view value, std::string* out) {
  const bool dots_only = value.find_first_not_of('.') == absl::string_view::npos;
  for (char c : value) out->push_back(c == '/' || c == '\0' || dots_only ? '_' : c);
}

// Position in path where the extension of the file name starts (path.size() if none). A leading
// dot (".report") is part of the name, not an extension.
size_t ExtensionStart(const std::string& path) {
  const size_t slash = path.rfind('/');
  const size_t name_start = slash == std::string::npos ? 0 : slash + 1;
  auto last_dot = [&](size_t end) -> size_t {
    if (end <= name_start + 1) return std::string::npos;
    const size_t dot = path.rfind('.', end - 1);
    return dot == std::string::npos || dot <= name_start ? std::string::npos : dot;
  };
  const size_t dot = last_dot(path.size());
  if (dot == std::string::npos) return path.size();
  const absl::string_view suffix = absl::string_view(path).substr(dot);
  for (const char* compression : kCompressionSuffixes) {
    if (suffix == compression) {
      const size_t inner = last_dot(dot);
      return inner == std::string::npos ? dot : inner;
    }
  }
  return dot;
}

}  // namespace

ProcessIdentity CurrentProcessIdentity() {
  ProcessIdentity id;
  id.pid = static_cast<int64_t>(::getpid());
  for (const char* name : kRankVariables) {
    const char* value = std::getenv(name);
    if (value != nullptr && value[0] != '\0') {
      id.rank = value;
      id.rank_known = true;
      break;
    }
  }
  char host[HOST_NAME_MAX + 1] = {};
  if (::gethostname(host, sizeof(host) - 1) == 0 && host[0] != '\0') {
    id.host = host;
  } else {
    id.host = "unknown";
  }
  return id;
}

absl::StatusOr<std::string> ExpandOutputPath(absl::string_view pattern, const ProcessIdentity& id) {
  std::string out;
  out.reserve(pattern.size() + 16);
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out.push_back(pattern[i]);
      continue;
    }
    if (i + 1 == pattern.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("output path ", QuoteForMessage(pattern),
                       " ends with a lone % (write %% for a percent sign)"));
    }
    switch (pattern[++i]) {
      case 'p':
        absl::StrAppend(&out, id.pid);
        break;
      case 'r':
        AppendSanitized(id.rank, &out);
        break;
      case 'h':
        AppendSanitized(id.host, &out);
        break;
      case '%':
        out.push_back('%');
        break;
      default:
        return absl::InvalidArgumentError(absl::StrCat(
            "unknown placeholder %", ForMessage(pattern.substr(i, 1)), " in output path ",
            QuoteForMessage(pattern), " (placeholders: %p pid, %r rank, %h host, %% percent)"));
    }
  }
  return out;
}

std::string TaggedOutputPath(const std::string& path, absl::string_view tag) {
  const size_t ext = ExtensionStart(path);
  return absl::StrCat(absl::string_view(path).substr(0, ext), ".", tag,
                      absl::string_view(path).substr(ext));
}

std::string AlternativeOutputPath(const std::string& path, int64_t pid, int attempt) {
  if (attempt <= 0) return path;
  return TaggedOutputPath(path, attempt > 1 ? absl::StrCat(pid, "-", attempt) : absl::StrCat(pid));
}

}  // namespace gpuidle::internal
