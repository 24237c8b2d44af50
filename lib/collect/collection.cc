#include "collect/collection.h"

#include "collect/collector.h"
#include "collect/cupti_api.h"
#include "core/status_macros.h"

namespace gpuidle::internal {

bool CollectionSupported() { return true; }

// LoadCupti loads once and keeps its answer, and the probes are a few getenv calls: StartCollection
// asks both again rather than keeping what PrepareCollection found.
absl::Status PrepareCollection() {
  if (absl::StatusOr<const CuptiApi*> api = LoadCupti(); !api.ok()) return api.status();
  return CollectorProbesFromEnvironment().status();
}

absl::Status StartCollection(const CollectionSettings& settings, StartCost* cost) {
  GPUIDLE_ASSIGN_OR_RETURN(const CuptiApi* api, LoadCupti());
  CollectorOptions options;
  options.buffer_bytes = settings.buffer_bytes;
  options.buffer_count = settings.buffer_count;
  options.max_records = settings.max_records;
  GPUIDLE_ASSIGN_OR_RETURN(options.probes, CollectorProbesFromEnvironment());
  return Collector::Get().Start(*api, options, cost);
}

absl::StatusOr<Timeline> StopCollection(CuptiAfterStop after, StopCost* cost) {
  return Collector::Get().Stop(after, cost);
}

void AbandonCollectionAfterFork() { Collector::Get().AbandonAfterFork(); }

void ThreadsAwayFromCuda(int64_t now_ns, int64_t min_away_ns, std::vector<uint64_t>* threads) {
  Collector::Get().ThreadsAwayFromCuda(now_ns, min_away_ns, threads);
}

}  // namespace gpuidle::internal
