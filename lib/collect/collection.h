// The live collection as the session sees it: no CUPTI type here, so that the layers above
// collect never include <cupti.h> and a build without CUPTI (-DGPUIDLE_WITH_CUPTI=OFF) swaps in
// collect/without_cupti.cc, whose StartCollection says why it cannot collect.
#ifndef GPUIDLE_LIB_COLLECT_COLLECTION_H_
#define GPUIDLE_LIB_COLLECT_COLLECTION_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gpuidle/options.h"
#include "model/timeline.h"

namespace gpuidle::internal {

// What Stop leaves behind. Once CUPTI has traced, it keeps intercepting the program's CUDA calls
// after every kind and callback is off, until it is detached (collect/cupti_detach.h). A stop
// in the middle of a program detaches; a stop at exit does not (nothing runs after it, and
// teardown at exit has its own hazards). CUPTI attaches again at the next start.
enum class CuptiAfterStop { kStayAttached, kDetach };

// Whether this build can collect at all (false: built with -DGPUIDLE_WITH_CUPTI=OFF).
bool CollectionSupported();

// Loads the process's CUPTI (collect/cupti_api.h LoadCupti) and, in a probe build, reads the
// probe settings (collect/collector_probes.h): OK, or why gpuidle cannot collect. A step of its
// own, so that an unusable CUPTI or setting is said before the GPU check.
absl::Status PrepareCollection();

// How long the parts of a start took (steady clock).
struct StartCost {
  int64_t attach_ns = 0;  // subscribing (claiming CUPTI), the buffer callbacks, the decode thread
  int64_t kinds_ns = 0;   // enabling the activity kinds
  int64_t calls_ns = 0;   // enabling the callbacks of the timed calls
};
// After PrepareCollection: takes CUPTI and starts recording what `options` ask (the buffer pool,
// the record limit: ProfilerOptions as the option table checked them, nothing reshaped on the
// way). Unavailable with CUPTI's reason when it refuses (no driver or GPU, another tool
// subscribed, ...); nothing stays enabled then. Fills *cost when given.
absl::Status StartCollection(const ProfilerOptions& options, StartCost* cost = nullptr);
// How long the parts of a stop took (steady clock), so that gpuidle can say what a profile cost.
struct StopCost {
  int64_t flush_ns = 0;   // disabling the kinds, CUPTI's forced flush, the last decode
  int64_t build_ns = 0;   // the timeline built from the records, host ranges and call sites
  int64_t detach_ns = 0;  // CUPTI detached (0 when it stays attached)
};
// Stops recording and returns the timeline (host ranges included); then detaches CUPTI as
// `after` says (collect/collector.h Collector::Stop). Fills *cost when given.
absl::StatusOr<Timeline> StopCollection(CuptiAfterStop after, StopCost* cost = nullptr);
// In a forked child: forget the parent's collection without calling CUPTI.
void AbandonCollectionAfterFork();

// The OS thread ids of the threads that made a timed CUDA call in the running collection, are
// not inside one now, and ended their latest one at least min_away_ns before now_ns (the
// timeline's clock): the threads whose host stack is worth sampling. Lock-free; any thread.
void ThreadsAwayFromCuda(int64_t now_ns, int64_t min_away_ns, std::vector<uint64_t>* threads);

// CUPTI's PM sampling of device throughput (collect/pm_sampling.h), for the session's throughput
// sampler (session/gpu_throughput_sampler.h). A device is set up at its first start and kept,
// with the interval of that start, until ReleaseDeviceThroughput. OK, or why the device cannot
// be sampled (one line: permissions, chip, driver; Unavailable in a build without CUPTI).
absl::Status StartDeviceThroughput(int device, int64_t interval_ns);
// Appends the samples every started device completed since the last call, on the GPU's clock;
// *overflow: samples were lost (the hardware buffer overflowed).
absl::Status DecodeDeviceThroughput(std::vector<GpuThroughputSample>* out, bool* overflow);
// Stops every started device (kept for the next start).
void StopDeviceThroughput();
// Tears every device's sampling down: before CUPTI is detached (collect/pm_sampling.h).
void ReleaseDeviceThroughput();
// Whether a stop asked to detach CUPTI detaches it (not in a benchmark build told to leave the
// detach out: collect/collector_probes.h).
bool CollectionDetachesAtStop();

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_COLLECT_COLLECTION_H_
