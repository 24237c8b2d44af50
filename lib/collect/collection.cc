#include "collect/collection.h"

#include <map>
#include <memory>
#include <mutex>

#include "collect/collector.h"
#include "collect/cupti_api.h"
#include "collect/pm_sampling.h"
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

namespace {

// The devices' PM samplers, until CUPTI is detached (collect/pm_sampling.h).
struct ThroughputDevices {
  std::mutex mu;
  std::map<int, std::unique_ptr<DevicePmSampler>> started;
};

ThroughputDevices& Throughput() {
  static auto* devices = new ThroughputDevices;  // never destroyed: CUPTI outlives statics
  return *devices;
}

}  // namespace

absl::Status StartDeviceThroughput(int device, int64_t interval_ns) {
  GPUIDLE_ASSIGN_OR_RETURN(const CuptiApi* api, LoadCupti());
  ThroughputDevices& t = Throughput();
  std::lock_guard<std::mutex> lock(t.mu);
  std::unique_ptr<DevicePmSampler>& sampler = t.started[device];
  if (sampler == nullptr) {
    absl::StatusOr<std::unique_ptr<DevicePmSampler>> made =
        DevicePmSampler::Create(*api, device, interval_ns);
    if (!made.ok()) {
      t.started.erase(device);
      return made.status();
    }
    sampler = *std::move(made);
  }
  return sampler->Start();
}

absl::Status DecodeDeviceThroughput(std::vector<GpuThroughputSample>* out, bool* overflow) {
  *overflow = false;
  ThroughputDevices& t = Throughput();
  std::lock_guard<std::mutex> lock(t.mu);
  absl::Status first = absl::OkStatus();
  for (auto& [device, sampler] : t.started) {
    bool lost = false;
    absl::Status st = sampler->Decode(out, &lost);
    *overflow = *overflow || lost;
    if (first.ok()) first = st;
  }
  return first;
}

void ReleaseDeviceThroughput() {
  ThroughputDevices& t = Throughput();
  std::lock_guard<std::mutex> lock(t.mu);
  t.started.clear();
}

bool CollectionDetachesAtStop() { return Collector::Get().DetachesAtStop(); }

void StopDeviceThroughput() {
  ThroughputDevices& t = Throughput();
  std::lock_guard<std::mutex> lock(t.mu);
  for (auto& [device, sampler] : t.started) (void)sampler->Stop();
}

}  // namespace gpuidle::internal
