// libFuzzer harness (d): the option parsers. The first byte picks one:
//   0: ApplyProfilerVariable(one of kProfilerVariables, or any name, value)
//   1: ProfilerOptionsFromVariables, the rest of the input split at NUL bytes into the values of
//      the variables in table order
//   2: ReadDisableVariable(value)
//   3: RunCli({"analyze", args...}), the rest split at NUL bytes into arguments
// Messages must stay short and printable whatever the values.
//
// `gpuidle analyze` reads and writes files: it runs in a scratch directory made at start-up,
// holding two small traces that are written again after every run, and an input with any
// argument that contains '/' is not run, so no path can leave that directory. "run" is never
// the command.
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "cli/cli.h"
#include "core/text_safety.h"
#include "fuzz_support.h"
#include "settings/environment.h"

namespace {

constexpr char kTrace[] = R"({"deviceProperties": [{"id": 0, "name": "GPU"}], "traceEvents": [
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 2, "ts": 0, "dur": 100},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": 10, "dur": 5, "args": {"correlation": 1}},
{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 20, "dur": 30, "args": {"device": 0, "stream": 7, "correlation": 1}},
{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 2, "ts": 100, "dur": 100},
{"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 1, "tid": 2, "ts": 110, "dur": 50, "args": {"correlation": 2}},
{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 120, "dur": 30, "args": {"device": 0, "stream": 7, "correlation": 3}}
]})";

std::filesystem::path scratch;

void WriteSeedFiles() {
  std::ofstream(scratch / "t.json", std::ios::binary | std::ios::trunc) << kTrace;
  std::ofstream(scratch / "u.json", std::ios::binary | std::ios::trunc) << kTrace;
}

// Everything but the seed traces goes; the seeds come back as they were.
void ResetScratch() {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(scratch, ec)) {
    const std::string name = entry.path().filename().string();
    if (name != "t.json" && name != "u.json") std::filesystem::remove_all(entry.path(), ec);
  }
  WriteSeedFiles();
}

void CheckText(absl::string_view text) {
  GPUIDLE_FUZZ_CHECK(gpuidle::internal::IsValidUtf8(text), text.substr(0, 200));
}

void CheckStatus(const absl::Status& s) {
  gpuidle::fuzz::CheckMessage(s.message());
  CheckText(s.message());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  std::string dir =
      (std::filesystem::temp_directory_path() / "gpuidle_options_fuzz.XXXXXX").string();
  if (::mkdtemp(dir.data()) == nullptr || ::chdir(dir.c_str()) != 0) {
    std::perror("options_fuzzer: scratch directory");
    std::abort();
  }
  scratch = dir;
  WriteSeedFiles();
  std::atexit([] {
    std::error_code ec;
    std::filesystem::remove_all(scratch, ec);
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int mode = data[0] % 4;
  const absl::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  constexpr size_t kVariables = std::size(gpuidle::internal::kProfilerVariables);
  switch (mode) {
    case 0: {
      if (rest.empty()) return 0;
      const auto pick = static_cast<unsigned char>(rest[0]);
      absl::string_view value = rest.substr(1);
      std::string name;
      if (pick < 240) {
        name = gpuidle::internal::kProfilerVariables[pick % kVariables];
      } else {  // a name of the input's own, up to the first NUL
        const size_t nul = value.find('\0');
        name = std::string(value.substr(0, nul));
        value = nul == absl::string_view::npos ? absl::string_view() : value.substr(nul + 1);
      }
      gpuidle::ProfilerOptions options;
      CheckStatus(gpuidle::internal::ApplyProfilerVariable(name, value, &options));
      return 0;
    }
    case 1: {
      std::vector<std::string> values = absl::StrSplit(rest, '\0');
      absl::StatusOr<gpuidle::ProfilerOptions> options =
          gpuidle::internal::ProfilerOptionsFromVariables([&](const char* name) -> const char* {
            for (size_t i = 0; i < kVariables && i < values.size(); ++i) {
              if (std::string_view(name) == gpuidle::internal::kProfilerVariables[i]) {
                return values[i].c_str();
              }
            }
            return nullptr;
          });
      if (!options.ok()) CheckStatus(options.status());
      return 0;
    }
    case 2: {
      const std::string value(rest.substr(0, rest.find('\0')));
      const gpuidle::internal::DisableSetting s =
          gpuidle::internal::ReadDisableVariable(value.c_str());
      gpuidle::fuzz::CheckMessage(s.warning);
      CheckText(s.warning);
      return 0;
    }
    default: {
      std::vector<std::string> args = {"analyze"};
      for (absl::string_view a : absl::StrSplit(rest, '\0')) {
        if (a.find('/') != absl::string_view::npos) return 0;  // could leave the scratch directory
        args.emplace_back(a);
      }
      if (args.size() > 64) return 0;
      std::ostringstream out, err;
      const int rc = gpuidle::internal::RunCli(args, out, err);
      ResetScratch();
      // 1 is an internal error: a bug, whatever the arguments.
      GPUIDLE_FUZZ_CHECK(rc == 0 || rc == 2 || rc == 3 || rc == 4, err.str().substr(0, 500));
      CheckText(err.str());
      // Messages quote the arguments (escaped: up to 6 bytes per byte, a path perhaps twice),
      // never more.
      GPUIDLE_FUZZ_CHECK(err.str().size() < 2048 + 12 * rest.size(), err.str().substr(0, 500));
      return 0;
    }
  }
}
