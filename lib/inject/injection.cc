// How libgpuidle.so gets into programs that do not know about it.
//
// - CUDA_INJECTION64_PATH=libgpuidle.so (what `gpuidle run` sets): the CUDA driver loads the
//   library during cuInit and calls InitializeInjection, which starts collection. Only
//   processes that use CUDA pay anything.
// - LD_PRELOAD=libgpuidle.so: the constructor below arms the same injection (sets
//   CUDA_INJECTION64_PATH to this library for the driver to read at cuInit) and NVTX capture.
//   Preloading is inherited by every child (shells, compilers), so it starts nothing itself.
// - Linked by an application (find_package): nothing happens until the C++ API is used.
//
// Every failure is one warning line; the program then runs exactly as without gpuidle.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "collect/cuda_driver.h"
#include "collect/nvtx_capture.h"
#include "core/same_file.h"
#include "gpuidle/export.h"
#include "gpuidle/profiler.h"
#include "session/session.h"
#include "settings/environment.h"
#include "settings/option_table.h"
#include "settings/process_tree_warning.h"
#include "settings/python_site.h"

namespace gpuidle::internal {
namespace {

// Identifies the injection as the owner of the session (not a Profiler).
constexpr char kInjectionOwner[] = "injection";

// Set by the constructor when LD_PRELOAD brought the library in (for messages).
bool armed_by_preload = false;

std::string OwnPath() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&OwnPath), &info) == 0 || info.dli_fname == nullptr) {
    return {};
  }
  char resolved[PATH_MAX];
  return realpath(info.dli_fname, resolved) != nullptr ? resolved : info.dli_fname;
}

// True if LD_PRELOAD names this library (rather than an application linking it).
bool Preloaded(const std::string& self) {
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload == nullptr || self.empty()) return false;
  for (absl::string_view entry :
       absl::StrSplit(preload, absl::ByAnyChar(": "), absl::SkipEmpty())) {
    if (SameFile(std::string(entry), self)) return true;
  }
  return false;
}

// One warning per process tree (settings/process_tree_warning.h).
void WarnOnceForProcessTree(absl::string_view message) {
  if (ProcessTreeWarned()) return;
  Warn(message);
  MarkProcessTreeWarned();
}

// GPUIDLE_DISABLE by the rule of every front end (settings/environment.h); a value that is
// not a switch word is one warning for the process tree, and gpuidle stays off.
bool Disabled() {
  const DisableSetting setting = ReadDisableVariable(std::getenv("GPUIDLE_DISABLE"));
  if (!setting.warning.empty()) WarnOnceForProcessTree(setting.warning);
  return setting.disabled;
}

void StartFromInjection(absl::string_view how) {
  if (Disabled()) return;
  absl::StatusOr<ProfilerOptions> options = ProfilerOptionsFromEnvironment();
  if (!options.ok()) {
    Warn(absl::StrCat(options.status().message(), "; gpuidle is off, the program runs as usual"));
    return;
  }
  // Long jobs: unless GPUIDLE_SAMPLE says otherwise, a run longer than a minute is sampled from
  // then on (settings/option_table.h, kAutoSample*); a shorter one is recorded whole.
  if (const char* sample = std::getenv("GPUIDLE_SAMPLE"); sample == nullptr || *sample == '\0') {
    option_rules::Sample("auto", &*options).IgnoreError();
  }
  option_rules::PartialReport(&*options);
  // Session::Start warns on failure.
  Session::Get().Start(*options, kInjectionOwner, how).IgnoreError();
}

__attribute__((constructor)) void ArmPreloadedInjection() {
  const std::string self = OwnPath();
  if (!Preloaded(self) || Disabled()) return;
  // Without a GPU the driver never loads the injection: say so now, once for the tree.
  if (absl::Status gpu = CheckForNvidiaGpu(); !gpu.ok()) {
    WarnOnceForProcessTree(
        absl::StrCat(gpu.message(), "; gpuidle is off, the program runs as usual"));
    return;
  }
  const char* injection = std::getenv("CUDA_INJECTION64_PATH");
  if (injection != nullptr && *injection != '\0' && !SameFile(injection, self)) {
    WarnOnceForProcessTree(absl::StrCat("CUDA_INJECTION64_PATH names another tool (", injection,
                                        "); gpuidle steps aside, the program runs as usual"));
    return;
  }
  // The constructor runs before main, while the process has one thread: setenv is safe here.
  setenv("CUDA_INJECTION64_PATH", self.c_str(), 1);
  setenv("NVTX_INJECTION64_PATH", self.c_str(), 0);
  armed_by_preload = true;
  // A Python interpreter has not initialised yet: its PYTHONPATH may still bring in gpuidle's
  // Python layer (as gpuidle run does). Other programs keep their environment; their Python
  // children are preloaded too and do the same.
  if (!SaysNo(std::getenv("GPUIDLE_PYTHON")) && dlsym(RTLD_DEFAULT, "Py_Initialize") != nullptr) {
    using IsInitialized = int (*)();
    auto initialized = reinterpret_cast<IsInitialized>(dlsym(RTLD_DEFAULT, "Py_IsInitialized"));
    const std::string site = PythonSiteDir(self);
    if (!site.empty() && (initialized == nullptr || initialized() == 0)) {
      const char* path = std::getenv("PYTHONPATH");
      setenv("PYTHONPATH", PrependToSearchPath(path != nullptr ? path : "", site).c_str(), 1);
    }
  }
}

}  // namespace
}  // namespace gpuidle::internal

// Called by the CUDA driver inside cuInit when CUDA_INJECTION64_PATH names this library.
extern "C" GPUIDLE_EXPORT int InitializeInjection(void) {
  // lib/ raises no exceptions, but the standard library may (std::bad_alloc): none may cross
  // into the driver, whose cuInit would terminate the program.
  try {
    gpuidle::internal::StartFromInjection(
        gpuidle::internal::armed_by_preload ? "LD_PRELOAD" : "CUDA_INJECTION64_PATH");
  } catch (...) {
    // Without allocating: memory is what ran out.
    static constexpr char kLine[] =
        "gpuidle: warning: cannot start (out of memory); gpuidle is off, the program runs as "
        "usual\n";
    if (write(STDERR_FILENO, kLine, sizeof kLine - 1) < 0) return 1;
  }
  return 1;  // gpuidle's own failures never fail CUDA's initialisation
}

// Called by NVTX in each program module that annotates, when NVTX_INJECTION64_PATH names this
// library (gpuidle run and LD_PRELOAD set it).
extern "C" GPUIDLE_EXPORT int InitializeInjectionNvtx2(
    gpuidle::internal::NvtxExportTableGetter get_export_table) {
  return gpuidle::internal::AttachNvtx(get_export_table);
}
