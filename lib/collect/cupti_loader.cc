// Loads CUPTI at run time instead of linking it: a program without CUDA must still load
// libgpuidle.so (and get one warning), and a process must never hold two copies of CUPTI.
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "collect/cupti_api.h"

namespace gpuidle::internal {
namespace {

constexpr char kCuptiSoname[] = "libcupti.so.13";

void* OpenCupti(std::string* tried) {
  // Already in the process (PyTorch's own copy): use it, never load a second one.
  if (void* h = dlopen(kCuptiSoname, RTLD_NOW | RTLD_NOLOAD)) return h;
  std::vector<std::string> candidates;
  if (const char* path = std::getenv("GPUIDLE_CUPTI_PATH"); path != nullptr && *path != '\0') {
    candidates.push_back(path);
  }
  candidates.push_back(kCuptiSoname);
  candidates.push_back("/usr/local/cuda/lib64/libcupti.so.13");
  candidates.push_back("/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13");
  std::vector<std::string> errors;
  for (const std::string& c : candidates) {
    if (void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
    const char* e = dlerror();
    errors.push_back(e != nullptr ? e : c);
  }
  *tried = absl::StrJoin(errors, "; ");
  return nullptr;
}

template <typename F>
bool Resolve(void* handle, const char* name, F* out, std::vector<std::string>* missing) {
  *out = reinterpret_cast<F>(dlsym(handle, name));
  if (*out == nullptr) missing->push_back(name);
  return *out != nullptr;
}

absl::StatusOr<const CuptiApi*> Load() {
  std::string tried;
  void* h = OpenCupti(&tried);
  if (h == nullptr) return absl::UnavailableError(absl::StrCat("CUPTI not found (", tried, ")"));
  static CuptiApi api;  // trivially destructible: safe at exit
  std::vector<std::string> missing;
  Resolve(h, "cuptiSubscribe", &api.Subscribe, &missing);
  Resolve(h, "cuptiUnsubscribe", &api.Unsubscribe, &missing);
  Resolve(h, "cuptiEnableCallback", &api.EnableCallback, &missing);
  Resolve(h, "cuptiActivityRegisterCallbacks", &api.ActivityRegisterCallbacks, &missing);
  Resolve(h, "cuptiActivityRegisterTimestampCallback", &api.ActivityRegisterTimestampCallback,
          &missing);
  Resolve(h, "cuptiSetThreadIdType", &api.SetThreadIdType, &missing);
  Resolve(h, "cuptiActivityEnable", &api.ActivityEnable, &missing);
  Resolve(h, "cuptiActivityDisable", &api.ActivityDisable, &missing);
  Resolve(h, "cuptiActivityEnableRuntimeApi", &api.ActivityEnableRuntimeApi, &missing);
  Resolve(h, "cuptiActivityEnableDriverApi", &api.ActivityEnableDriverApi, &missing);
  Resolve(h, "cuptiActivityGetNextRecord", &api.ActivityGetNextRecord, &missing);
  Resolve(h, "cuptiActivityGetNumDroppedRecords", &api.ActivityGetNumDroppedRecords, &missing);
  Resolve(h, "cuptiActivityFlushAll", &api.ActivityFlushAll, &missing);
  Resolve(h, "cuptiActivityFlushPeriod", &api.ActivityFlushPeriod, &missing);
  Resolve(h, "cuptiGetCallbackName", &api.GetCallbackName, &missing);
  Resolve(h, "cuptiGetResultString", &api.GetResultString, &missing);
  Resolve(h, "cuptiGetTimestamp", &api.GetTimestamp, &missing);
  Resolve(h, "cuptiFinalize", &api.Finalize, &missing);
  if (!missing.empty()) {
    return absl::UnavailableError(
        absl::StrCat("the CUPTI in this process is older than CUDA 13 (missing ",
                     absl::StrJoin(missing, ", "), ")"));
  }
  return &api;
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

}  // namespace gpuidle::internal
