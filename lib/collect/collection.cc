#include "collect/collection.h"

#include "collect/collector.h"
#include "collect/cupti_api.h"
#include "core/status_macros.h"

namespace gpuidle::internal {

bool CollectionSupported() { return true; }

// LoadCupti loads once and keeps its answer, and the benchmark's probes (a probe build's only:
// collect/collector_probes.h) are cheap to read: StartCollection asks both again rather than
// keeping what PrepareCollection found.
absl::Status PrepareCollection() {
  if (absl::StatusOr<const CuptiApi*> api = LoadCupti(); !api.ok()) return api.status();
  return BenchmarkProbes().status();
}

absl::Status StartCollection(const ProfilerOptions& options, StartCost* cost) {
  GPUIDLE_ASSIGN_OR_RETURN(const CuptiApi* api, LoadCupti());
  CollectorOptions collector = CollectorOptions::For(options);
  GPUIDLE_ASSIGN_OR_RETURN(collector.probes, BenchmarkProbes());
  return Collector::Get().Start(*api, collector, cost);
}

absl::StatusOr<Timeline> StopCollection(CuptiAfterStop after, StopCost* cost) {
  return Collector::Get().Stop(after, cost);
}

void AbandonCollectionAfterFork() { Collector::Get().AbandonAfterFork(); }

void ThreadsAwayFromCuda(int64_t now_ns, int64_t min_away_ns, std::vector<uint64_t>* threads) {
  Collector::Get().ThreadsAwayFromCuda(now_ns, min_away_ns, threads);
}

}  // namespace gpuidle::internal
