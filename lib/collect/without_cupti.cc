// The live collection of a build without CUPTI (-DGPUIDLE_WITH_CUPTI=OFF): gpuidle analyze, the
// C++ analysis API and the Python package's offline part work; every way of collecting says,
// once, that this build cannot.
#include "absl/status/status.h"
#include "collect/collection.h"
#include "collect/nvtx_capture.h"

namespace gpuidle::internal {

bool CollectionSupported() { return false; }

absl::Status PrepareCollection() {
  return absl::UnavailableError(
      "this gpuidle was built without CUPTI (GPUIDLE_WITH_CUPTI=OFF) and can only analyse "
      "traces");
}

absl::Status StartCollection(const ProfilerOptions&, StartCost*) { return PrepareCollection(); }

absl::StatusOr<Timeline> StopCollection(CuptiAfterStop, StopCost*) {
  return absl::FailedPreconditionError("not collecting");
}

void AbandonCollectionAfterFork() {}

void ThreadsAwayFromCuda(int64_t, int64_t, std::vector<uint64_t>* threads) { threads->clear(); }

absl::Status StartDeviceThroughput(int, int64_t) { return PrepareCollection(); }
absl::Status DecodeDeviceThroughput(std::vector<GpuThroughputSample>*, bool* overflow) {
  *overflow = false;
  return absl::OkStatus();
}
void StopDeviceThroughput() {}
void ReleaseDeviceThroughput() {}
bool CollectionDetachesAtStop() { return true; }

// No NVTX in this build: nothing records markers, so they cost nothing.
int AttachNvtx(NvtxExportTableGetter) { return 0; }
void InjectOwnNvtx() {}
int NvtxModulesAttached() { return 0; }
void PushMarkerRange(uint32_t, const char*) noexcept {}
void PopMarkerRange() noexcept {}
uint64_t StartMarkerRange(uint32_t, const char*) noexcept { return 0; }
void EndMarkerRange(uint64_t) noexcept {}
bool MarkersWanted() noexcept { return false; }

}  // namespace gpuidle::internal
