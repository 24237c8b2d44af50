// Loads CUPTI at run time instead of linking it: a program without CUDA must still load
// libgpuidle.so (and get one warning), and a process must never hold two copies of CUPTI.
#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "collect/cupti_api.h"
#include "core/same_file.h"
#include "core/text_safety.h"

namespace gpuidle::internal {
namespace {

constexpr char kCuptiSoname[] = "libcupti.so.13";
constexpr char kPathVariable[] = "GPUIDLE_CUPTI_PATH";
// CUPTI_API_VERSION of CUDA 13.x is 13xxxx (130001 for 13.0); a CUPTI of CUDA 12 says 18 to 28.
constexpr uint32_t kApiVersionOfCuda13 = 130000;
constexpr uint32_t kApiVersionOfCuda14 = 140000;
// Paths in messages: long enough for any real one, short enough for one line.
constexpr size_t kPathBytesInMessages = 200;

std::string LastDlError(absl::string_view otherwise) {
  const char* e = dlerror();
  return e != nullptr ? e : std::string(otherwise);
}

// The file behind handle, as the user would recognise it. dlopen by path: that path. By name:
// the file the loader found, named by the LD_LIBRARY_PATH entry that holds it where there is
// one (the loader reuses an already loaded file reached through a link, and then reports the
// link's target), else by the loader's own name for it.
std::string FileOf(void* handle, const std::string& requested) {
  if (requested.find('/') != std::string::npos) return requested;
  link_map* map = nullptr;
  std::string loaded;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr) {
    loaded = map->l_name;
  }
  if (const char* path = std::getenv("LD_LIBRARY_PATH"); path != nullptr && !loaded.empty()) {
    for (absl::string_view dir : absl::StrSplit(path, ':', absl::SkipEmpty())) {
      const std::string candidate = absl::StrCat(dir, "/", requested);
      if (SameFile(candidate, loaded)) return candidate;
    }
  }
  return loaded.empty() ? requested : loaded;
}

// A CUPTI library, opened: its handle and the file it came from.
struct Opened {
  void* handle = nullptr;
  std::string file;
  bool named_by_variable = false;  // GPUIDLE_CUPTI_PATH chose it
};

// The CUPTI this process will use, or why there is none. The one already loaded (PyTorch's own
// copy) always wins: a process must never hold two. GPUIDLE_CUPTI_PATH, when set, is the only
// candidate besides it: a file that cannot be used is an error naming the variable, never a
// quiet fall-back to another CUPTI.
absl::StatusOr<Opened> OpenCupti() {
  const char* variable = std::getenv(kPathVariable);
  const bool has_variable = variable != nullptr && *variable != '\0';
  if (void* h = dlopen(kCuptiSoname, RTLD_NOW | RTLD_NOLOAD)) {
    Opened loaded{h, FileOf(h, kCuptiSoname), false};
    if (has_variable && !SameFile(variable, loaded.file)) {
      return absl::InvalidArgumentError(absl::StrCat(
          kPathVariable, " names ", ForMessage(variable, kPathBytesInMessages),
          ", but this process already uses the CUPTI in ",
          ForMessage(loaded.file, kPathBytesInMessages), " (two cannot work together)"));
    }
    loaded.named_by_variable = has_variable;
    return loaded;
  }
  if (has_variable) {
    void* h = dlopen(variable, RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      // dlerror names the file already: "PATH: cannot open shared object file: ...".
      return absl::InvalidArgumentError(absl::StrCat(
          kPathVariable, ": ", ForMessage(LastDlError(variable), kPathBytesInMessages + 80)));
    }
    return Opened{h, variable, true};
  }
  const std::vector<std::string> candidates = {kCuptiSoname, "/usr/local/cuda/lib64/libcupti.so.13",
                                               "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13"};
  std::vector<std::string> errors;
  for (const std::string& c : candidates) {
    if (void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) return Opened{h, FileOf(h, c), false};
    errors.push_back(ForMessage(LastDlError(c), 120));
  }
  return absl::UnavailableError(
      absl::StrCat("CUPTI not found (", absl::StrJoin(errors, "; "), ")"));
}

// The functions looked up, and those the library lacks.
struct Lookups {
  size_t tried = 0;
  std::vector<const char*> missing;
};

template <typename F>
void Resolve(void* handle, const char* name, F* out, Lookups* lookups) {
  *out = reinterpret_cast<F>(dlsym(handle, name));
  ++lookups->tried;
  if (*out == nullptr) lookups->missing.push_back(name);
}

// Why the library is not the CUPTI gpuidle was built for, or "" if it is: one short clause for
// a one-line warning, never the list of every missing function.
std::string WhyNotCuda13Cupti(void* handle, const Lookups& lookups) {
  // cuptiGetVersion is in every CUPTI since CUDA 4: without it this is another library.
  using GetVersion = CUptiResult (*)(uint32_t*);
  const auto get_version = reinterpret_cast<GetVersion>(dlsym(handle, "cuptiGetVersion"));
  if (get_version == nullptr) {
    return "not CUPTI (it has no cuptiGetVersion)";
  }
  uint32_t version = 0;
  if (get_version(&version) == CUPTI_SUCCESS &&
      (version < kApiVersionOfCuda13 || version >= kApiVersionOfCuda14)) {
    return absl::StrCat("not the CUPTI of CUDA 13 (its API version is ", version, ", CUDA 13's is ",
                        kApiVersionOfCuda13 / 10000, "xxxx)");
  }
  if (!lookups.missing.empty()) {
    return absl::StrCat("not the CUPTI of CUDA 13 (", lookups.missing.size(), " of the ",
                        lookups.tried, " functions gpuidle calls are missing, ",
                        lookups.missing.front(), lookups.missing.size() > 1 ? " among them)" : ")");
  }
  return "";
}

absl::StatusOr<const CuptiApi*> Load() {
  absl::StatusOr<Opened> opened = OpenCupti();
  if (!opened.ok()) return opened.status();
  void* h = opened->handle;
  static CuptiApi api;  // trivially destructible: safe at exit
  Lookups lookups;
  Resolve(h, "cuptiSubscribe", &api.Subscribe, &lookups);
  Resolve(h, "cuptiUnsubscribe", &api.Unsubscribe, &lookups);
  Resolve(h, "cuptiEnableCallback", &api.EnableCallback, &lookups);
  Resolve(h, "cuptiActivityRegisterCallbacks", &api.ActivityRegisterCallbacks, &lookups);
  Resolve(h, "cuptiActivityRegisterTimestampCallback", &api.ActivityRegisterTimestampCallback,
          &lookups);
  Resolve(h, "cuptiSetThreadIdType", &api.SetThreadIdType, &lookups);
  Resolve(h, "cuptiActivityEnable", &api.ActivityEnable, &lookups);
  Resolve(h, "cuptiActivityDisable", &api.ActivityDisable, &lookups);
  Resolve(h, "cuptiActivityEnableRuntimeApi", &api.ActivityEnableRuntimeApi, &lookups);
  Resolve(h, "cuptiActivityEnableDriverApi", &api.ActivityEnableDriverApi, &lookups);
  Resolve(h, "cuptiActivityGetNextRecord", &api.ActivityGetNextRecord, &lookups);
  Resolve(h, "cuptiActivityGetNumDroppedRecords", &api.ActivityGetNumDroppedRecords, &lookups);
  Resolve(h, "cuptiActivityFlushAll", &api.ActivityFlushAll, &lookups);
  Resolve(h, "cuptiActivityFlushPeriod", &api.ActivityFlushPeriod, &lookups);
  Resolve(h, "cuptiGetCallbackName", &api.GetCallbackName, &lookups);
  Resolve(h, "cuptiGetResultString", &api.GetResultString, &lookups);
  Resolve(h, "cuptiGetTimestamp", &api.GetTimestamp, &lookups);
  Resolve(h, "cuptiFinalize", &api.Finalize, &lookups);
  Lookups pm;  // optional: only PM sampling needs them
  Resolve(h, "cuptiProfilerInitialize", &api.ProfilerInitialize, &pm);
  Resolve(h, "cuptiProfilerDeInitialize", &api.ProfilerDeInitialize, &pm);
  Resolve(h, "cuptiDeviceGetChipName", &api.DeviceGetChipName, &pm);
  Resolve(h, "cuptiPmSamplingGetCounterAvailability", &api.PmSamplingGetCounterAvailability, &pm);
  Resolve(h, "cuptiPmSamplingEnable", &api.PmSamplingEnable, &pm);
  Resolve(h, "cuptiPmSamplingDisable", &api.PmSamplingDisable, &pm);
  Resolve(h, "cuptiPmSamplingSetConfig", &api.PmSamplingSetConfig, &pm);
  Resolve(h, "cuptiPmSamplingGetCounterDataSize", &api.PmSamplingGetCounterDataSize, &pm);
  Resolve(h, "cuptiPmSamplingCounterDataImageInitialize", &api.PmSamplingCounterDataImageInitialize,
          &pm);
  Resolve(h, "cuptiPmSamplingStart", &api.PmSamplingStart, &pm);
  Resolve(h, "cuptiPmSamplingStop", &api.PmSamplingStop, &pm);
  Resolve(h, "cuptiPmSamplingDecodeData", &api.PmSamplingDecodeData, &pm);
  Resolve(h, "cuptiPmSamplingGetCounterDataInfo", &api.PmSamplingGetCounterDataInfo, &pm);
  Resolve(h, "cuptiPmSamplingCounterDataGetSampleInfo", &api.PmSamplingCounterDataGetSampleInfo,
          &pm);
  Resolve(h, "cuptiProfilerHostInitialize", &api.ProfilerHostInitialize, &pm);
  Resolve(h, "cuptiProfilerHostDeinitialize", &api.ProfilerHostDeinitialize, &pm);
  Resolve(h, "cuptiProfilerHostConfigAddMetrics", &api.ProfilerHostConfigAddMetrics, &pm);
  Resolve(h, "cuptiProfilerHostGetConfigImageSize", &api.ProfilerHostGetConfigImageSize, &pm);
  Resolve(h, "cuptiProfilerHostGetConfigImage", &api.ProfilerHostGetConfigImage, &pm);
  Resolve(h, "cuptiProfilerHostGetNumOfPasses", &api.ProfilerHostGetNumOfPasses, &pm);
  Resolve(h, "cuptiProfilerHostEvaluateToGpuValues", &api.ProfilerHostEvaluateToGpuValues, &pm);
  if (!pm.missing.empty()) api.pm_sampling_missing = pm.missing.front();
  const std::string why_not = WhyNotCuda13Cupti(h, lookups);
  if (why_not.empty()) return &api;
  // Never used: the table is cleared, the library stays loaded (unloading a library whose
  // constructors ran is not safe in general).
  api = CuptiApi{};
  const std::string what =
      absl::StrCat(ForMessage(opened->file, kPathBytesInMessages), " is ", why_not);
  if (opened->named_by_variable) {
    return absl::InvalidArgumentError(absl::StrCat(kPathVariable, ": ", what));
  }
  return absl::UnavailableError(what);
}

}  // namespace

absl::StatusOr<const CuptiApi*> LoadCupti() {
  static absl::StatusOr<const CuptiApi*>* loaded = nullptr;
  static std::once_flag once;
  std::call_once(once, [] { loaded = new absl::StatusOr<const CuptiApi*>(Load()); });
  return *loaded;
}

std::string DescribeCuptiResult(const CuptiApi& api, CUptiResult result) {
  const char* text = nullptr;
  if (api.GetResultString != nullptr && api.GetResultString(result, &text) == CUPTI_SUCCESS &&
      text != nullptr) {
    return text;
  }
  return absl::StrCat("CUPTI error ", static_cast<int>(result));
}

absl::Status CuptiStatus(const CuptiApi& api, CUptiResult result, absl::string_view what) {
  if (result == CUPTI_SUCCESS) return absl::OkStatus();
  return absl::UnavailableError(
      absl::StrCat("CUPTI ", what, " failed: ", DescribeCuptiResult(api, result)));
}

}  // namespace gpuidle::internal
