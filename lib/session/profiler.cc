// The public C++ API of live profiling: thin over Session.
#include "gpuidle/profiler.h"

#include <atomic>
#include <string>

#include "absl/strings/str_cat.h"
#include "analysis/analyze.h"
#include "collect/call_sites.h"
#include "collect/clock.h"
#include "collect/collection.h"
#include "collect/nvtx_capture.h"
#include "gpuidle/analyze.h"
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
