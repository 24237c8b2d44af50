// The public C++ API of live profiling: thin over Session.
#include "gpuidle/profiler.h"

#include <pthread.h>

#include <atomic>
#include <mutex>
#include <new>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "analysis/analyze.h"
#include "collect/call_sites.h"
#include "collect/clock.h"
#include "collect/collection.h"
#include "collect/nvtx_capture.h"
#include "gpuidle/analyze.h"
#include "model/trace_names.h"
#include "report/trace_writer.h"
#include "session/session.h"

namespace gpuidle {

struct Profiler::Impl {
  absl::StatusOr<ProfilerOptions> options;
  std::shared_ptr<const internal::CollectionResult> last;
  std::string no_path;
};

Profiler::Profiler() : impl_(std::make_unique<Impl>()) {
  impl_->options = ProfilerOptionsFromEnvironment();
}

Profiler::Profiler(ProfilerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
}

Profiler::~Profiler() {
  if (internal::Session::Get().CollectingFor(this)) Stop().IgnoreError();
}

absl::Status Profiler::Start() {
  if (!impl_->options.ok()) {
    internal::Warn(absl::StrCat(impl_->options.status().message(),
                                "; gpuidle is off, the program runs as usual"));
    return impl_->options.status();
  }
  return internal::Session::Get().Start(*impl_->options, this, "the C++ API");
}

absl::Status Profiler::Stop() { return StopCollection(/*detach_cupti=*/true); }

absl::Status Profiler::StopAtExit() { return StopCollection(/*detach_cupti=*/false); }

absl::Status Profiler::StopCollection(bool detach_cupti) {
  absl::StatusOr<std::shared_ptr<const internal::CollectionResult>> result =
      internal::Session::Get().Stop(this, detach_cupti ? internal::CuptiAfterStop::kDetach
                                                       : internal::CuptiAfterStop::kStayAttached);
  if (!result.ok()) return result.status();
  impl_->last = *std::move(result);
  // The report stays available when an output could not be written (the status says why).
  return impl_->last->output_status;
}

bool Profiler::collecting() const { return internal::Session::Get().CollectingFor(this); }

const Report* Profiler::report() const {
  return impl_->last != nullptr && impl_->last->report ? &*impl_->last->report : nullptr;
}

absl::StatusOr<std::string> Profiler::FormatReport(absl::string_view format) const {
  const Report* r = report();
  if (r == nullptr) return absl::FailedPreconditionError("no report: nothing was collected yet");
  return gpuidle::FormatReport(*r, format);
}

absl::Status Profiler::SaveReport(const std::string& path, absl::string_view format) const {
  SaveOptions save;
  save.format = std::string(format);
  return SaveReport(path, save);
}

absl::Status Profiler::SaveReport(const std::string& path, const SaveOptions& save) const {
  const Report* r = report();
  if (r == nullptr) return absl::FailedPreconditionError("no report: nothing was collected yet");
  return gpuidle::SaveReport(*r, path, save);
}

absl::Status Profiler::SaveTrace(const std::string& path, bool overwrite) const {
  if (impl_->last == nullptr) {
    return absl::FailedPreconditionError("no trace: nothing was collected yet");
  }
  internal::OutputFileOptions output;
  output.if_exists = overwrite ? internal::IfExists::kReplace : internal::IfExists::kFail;
  const internal::Timeline& timeline = impl_->last->timeline;
  const std::optional<internal::GapList> gaps =
      internal::GapsToDraw(timeline, report(), internal::TraceOptions::kDefaultMaxGaps);
  return internal::WriteGpuidleTrace(timeline, report(), gaps ? &*gaps : nullptr, path, output)
      .status();
}

const std::string& Profiler::written_report_path() const {
  return impl_->last != nullptr ? impl_->last->report_path : impl_->no_path;
}

const std::string& Profiler::written_trace_path() const {
  return impl_->last != nullptr ? impl_->last->trace_path : impl_->no_path;
}

ProfileCost Profiler::cost() const {
  return impl_->last != nullptr ? impl_->last->cost : ProfileCost{};
}

ScopedProfile::ScopedProfile() { profiler_.Start().IgnoreError(); }
ScopedProfile::ScopedProfile(ProfilerOptions options) : profiler_(std::move(options)) {
  profiler_.Start().IgnoreError();
}
ScopedProfile::~ScopedProfile() {
  if (profiler_.collecting()) profiler_.Stop().IgnoreError();
}

// --- markers: NVTX ranges in the domain "gpuidle" (see collect/nvtx_capture.h) ---

namespace {

uint32_t CategoryOf(MarkerKind kind) {
  switch (kind) {
    case MarkerKind::kStep:
      return internal::kMarkerCategoryStep;
    case MarkerKind::kData:
      return internal::kMarkerCategoryData;
    case MarkerKind::kCallSite:
      return internal::kMarkerCategoryCallSite;
    case MarkerKind::kUser:
      break;
  }
  return internal::kMarkerCategoryUser;
}

std::atomic<uint64_t> step_counter{0};

}  // namespace

void PushMarker(MarkerKind kind, absl::string_view name) noexcept {
  std::string message;
  if (!name.empty()) {
    message = std::string(name);
  } else if (kind == MarkerKind::kStep) {
    message = absl::StrCat("gpuidle.step#", step_counter.fetch_add(1));
  } else if (kind == MarkerKind::kData) {
    message = "gpuidle.data";
  } else {
    message = "gpuidle.range";
  }
  internal::PushMarkerRange(CategoryOf(kind), message.c_str());
}

void PopMarker() noexcept { internal::PopMarkerRange(); }

// --- serving requests: NVTX start/end ranges, by handle ---

namespace {

// The open requests by handle: their NVTX range ids and the id their run is named with. A server
// that never ends its requests must not grow it without bound: past the limit a request gets no
// handle (and no ranges), as the recorder drops ranges past its own limit.
constexpr size_t kMaxOpenRequests = size_t{1} << 18;

struct OpenRequest {
  uint64_t request_range = 0;
  uint64_t run_range = 0;
  bool running = false;
  std::string id;
};

class OpenRequests {
 public:
  static OpenRequests& Get() {
    // Never destroyed: requests may end during exit.
    static OpenRequests* requests = [] {
      // The child of a fork may find mu_ held by a parent thread that is not there.
      pthread_atfork(nullptr, nullptr, [] { new (&Get().mu_) std::mutex(); });
      return new OpenRequests();
    }();
    return *requests;
  }

  uint64_t Start(absl::string_view id) {
    const uint64_t handle = next_handle_.fetch_add(1, std::memory_order_relaxed);
    OpenRequest open;
    open.id = std::string(id);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (open_.size() >= kMaxOpenRequests) return 0;
      // Started under the lock, so that an EndRequest racing with the handle's return finds the
      // range id (handles are told to the program only when this returns, but stay safe).
      open.request_range = internal::StartMarkerRange(internal::kMarkerCategoryRequest,
                                                      Name(internal::kRequestName, id).c_str());
      open_.emplace(handle, std::move(open));
    }
    return handle;
  }

  void Running(uint64_t handle) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = open_.find(handle);
    if (it == open_.end() || it->second.running) return;
    it->second.running = true;
    it->second.run_range =
        internal::StartMarkerRange(internal::kMarkerCategoryRequestRun,
                                   Name(internal::kRequestRunName, it->second.id).c_str());
  }

  void End(uint64_t handle) {
    OpenRequest open;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = open_.find(handle);
      if (it == open_.end()) return;
      open = std::move(it->second);
      open_.erase(it);
    }
    // The run first: it ends no later than its request.
    if (open.running) internal::EndMarkerRange(open.run_range);
    internal::EndMarkerRange(open.request_range);
  }

 private:
  static std::string Name(absl::string_view base, absl::string_view id) {
    return id.empty() ? std::string(base) : absl::StrCat(base, ":", id);
  }

  std::atomic<uint64_t> next_handle_{1};
  std::mutex mu_;
  absl::flat_hash_map<uint64_t, OpenRequest> open_;
};

}  // namespace

uint64_t StartRequest(absl::string_view id) noexcept {
  // Nobody would see the request: no name, no lock, no handle.
  if (!internal::MarkersWanted()) return 0;
  try {
    return OpenRequests::Get().Start(id);
  } catch (...) {  // out of memory: a request less
    return 0;
  }
}

void RequestRunning(uint64_t handle) noexcept {
  if (handle == 0) return;
  try {
    OpenRequests::Get().Running(handle);
  } catch (...) {  // out of memory: its run stays unmarked
  }
}

void EndRequest(uint64_t handle) noexcept {
  if (handle == 0) return;
  OpenRequests::Get().End(handle);
}

RequestRange::RequestRange(absl::string_view id) noexcept : handle_(StartRequest(id)) {}
RequestRange::~RequestRange() { EndRequest(handle_); }
void RequestRange::Running() noexcept { RequestRunning(handle_); }

void SetCallSiteProvider(CallSiteProvider provider) noexcept {
  internal::SetSiteFunction(provider);
}

CollectionState CurrentCollection() {
  const internal::Session::State s = internal::Session::Get().CurrentState();
  CollectionState state;
  state.supported = internal::CollectionSupported();
  state.collecting = s.collecting;
  state.injected = s.injected;
  state.started_by = s.started_by;
  state.host_sample_period_ns = s.host_sample_period_ns;
  state.launch_gap_max_ns = s.launch_gap_max_ns;
  return state;
}

bool Recording() noexcept { return internal::Session::Get().Recording(); }

absl::Status StopCollectionForAnotherTool() { return internal::Session::Get().StopAny(); }

void SetSummaryAtSignal(bool print) noexcept { internal::Session::Get().SetSummaryAtSignal(print); }

int64_t TimelineClockNs() noexcept { return internal::TimelineNowNs(); }

std::vector<uint64_t> ThreadsAwayFromCuda(int64_t min_away_ns) {
  std::vector<uint64_t> threads;
  internal::ThreadsAwayFromCuda(internal::TimelineNowNs(), min_away_ns, &threads);
  return threads;
}

void RecordHostSamples(int64_t time_ns,
                       const std::vector<std::pair<uint64_t, std::string>>& samples) noexcept {
  try {
    internal::Session::Get().RecordHostSamples(time_ns, samples);
  } catch (...) {  // out of memory: a sample less
  }
}

StepMarker::StepMarker() noexcept { PushMarker(MarkerKind::kStep); }
StepMarker::~StepMarker() { PopMarker(); }
DataRange::DataRange() noexcept { PushMarker(MarkerKind::kData); }
DataRange::~DataRange() { PopMarker(); }
UserRange::UserRange(const char* name) noexcept {
  PushMarker(MarkerKind::kUser, name != nullptr ? name : "");
}
UserRange::~UserRange() { PopMarker(); }

}  // namespace gpuidle
