// A fluent builder of synthetic timelines for analysis tests, in microseconds.
//
//   Timeline t = TimelineBuilder()
//                    .Kernel(0, 100)                    // GPU 0 busy [0, 100) us
//                    .Launch(/*thread=*/1, 150, 160)    // the next kernel's launch call...
//                    .Kernel(170, 200)                  // ...joined to the kernel after it
//                    .Build();
//
// Launch() creates a call whose correlation id is joined to the next Kernel()/Copy() added
// after it; Kernel() without a pending launch has no host call (unattributed).
#ifndef GPUIDLE_TESTS_TESTING_TIMELINE_BUILDER_H_
#define GPUIDLE_TESTS_TESTING_TIMELINE_BUILDER_H_

#include <cstdint>
#include <optional>
#include <string>

#include "model/timeline.h"

namespace gpuidle::testing {

using internal::CallCategory;
using internal::CopyKind;
using internal::RangeKind;
using internal::Timeline;

class TimelineBuilder {
 public:
  TimelineBuilder();

  // Device work on the current device (Device() switches it; default 0).
  TimelineBuilder& Device(int device);
  TimelineBuilder& Stream(uint32_t stream);
  TimelineBuilder& Kernel(double start_us, double end_us, const std::string& name = "kernel");
  TimelineBuilder& NcclKernel(double start_us, double end_us);
  TimelineBuilder& Copy(double start_us, double end_us, CopyKind kind, bool pageable = false);
  TimelineBuilder& Memset(double start_us, double end_us);

  // Host CUDA calls on a thread. Launch/CopyCall correlate with the next device op added.
  TimelineBuilder& Launch(uint64_t thread, double start_us, double end_us,
                          const std::string& api = "cudaLaunchKernel");
  TimelineBuilder& CopyCall(uint64_t thread, double start_us, double end_us,
                            const std::string& api = "cudaMemcpyAsync");
  TimelineBuilder& Sync(uint64_t thread, double start_us, double end_us,
                        const std::string& api = "cudaStreamSynchronize");
  TimelineBuilder& WaitEvent(uint64_t thread, double start_us, double end_us, uint32_t stream,
                             uint32_t waited_stream);
  TimelineBuilder& OtherCall(uint64_t thread, double start_us, double end_us,
                             const std::string& api = "cudaGetDevice");

  // Host ranges.
  TimelineBuilder& Range(uint64_t thread, double start_us, double end_us, RangeKind kind,
                         const std::string& name);
  TimelineBuilder& Step(uint64_t thread, double start_us, double end_us, const std::string& name);
  TimelineBuilder& Data(uint64_t thread, double start_us, double end_us);
  TimelineBuilder& Op(uint64_t thread, double start_us, double end_us, const std::string& name);

  // A sampled host stack: frames "file:line function", outermost first, '\n'-separated.
  TimelineBuilder& Sample(uint64_t thread, double at_us, const std::string& stack);

  TimelineBuilder& Visible(int device);
  TimelineBuilder& Rank(int rank);

  Timeline Build();

 private:
  static int64_t Ns(double us) { return static_cast<int64_t>(us * 1000.0 + 0.5); }
  internal::HostCall& AddCall(uint64_t thread, double start_us, double end_us,
                              const std::string& api);
  uint64_t NextCorrelation();
  uint64_t TakePending();

  Timeline t_;
  int device_ = 0;
  uint32_t stream_ = 7;
  uint64_t next_correlation_ = 1;
  std::optional<uint64_t> pending_;  // correlation of the last Launch/CopyCall not yet used
};

}  // namespace gpuidle::testing

#endif  // GPUIDLE_TESTS_TESTING_TIMELINE_BUILDER_H_
