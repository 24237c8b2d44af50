#include "collect/collection.h"

#include "collect/collector.h"
#include "collect/cupti_api.h"
#include "core/status_macros.h"

namespace gpuidle::internal {
namespace {

// What PrepareCollection found, for StartCollection (the session calls both under its lock).
const CuptiApi* prepared_api = nullptr;
CollectorProbes prepared_probes;

}  // namespace

bool CollectionSupported() { return true; }

absl::Status PrepareCollection() {
  GPUIDLE_ASSIGN_OR_RETURN(prepared_api, LoadCupti());
  GPUIDLE_ASSIGN_OR_RETURN(prepared_probes, CollectorProbesFromEnvironment());
  return absl::OkStatus();
}

absl::Status StartCollection(const CollectionSettings& settings) {
  if (prepared_api == nullptr) return absl::FailedPreconditionError("CUPTI is not loaded");
  CollectorOptions options;
  options.buffer_bytes = settings.buffer_bytes;
  options.buffer_count = settings.buffer_count;
  options.max_records = settings.max_records;
  options.probes = prepared_probes;
  return Collector::Get().Start(*prepared_api, options);
}

absl::StatusOr<Timeline> StopCollection(CuptiAfterStop after) {
  return Collector::Get().Stop(after);
}

void AbandonCollectionAfterFork() { Collector::Get().AbandonAfterFork(); }

void ThreadsAwayFromCuda(int64_t now_ns, int64_t min_away_ns, std::vector<uint64_t>* threads) {
  Collector::Get().ThreadsAwayFromCuda(now_ns, min_away_ns, threads);
}

}  // namespace gpuidle::internal
