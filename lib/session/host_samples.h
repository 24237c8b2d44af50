// Host stack samples that a language binding's sampler hands the session while it collects
// (DESIGN.md, evidence for host stretches), kept bounded until the collection stops.
#ifndef GPUIDLE_LIB_SESSION_HOST_SAMPLES_H_
#define GPUIDLE_LIB_SESSION_HOST_SAMPLES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "model/timeline.h"

namespace gpuidle::internal {

// The host stack samples of one collection, until it stops: bounded (at most max_samples
// samples, and max_stack_bytes of distinct stacks; the rest is counted as dropped), identical
// stacks stored once. Not thread-safe (the session locks it).
class HostSampleBuffer {
 public:
  static constexpr size_t kMaxSamples = 100'000;
  static constexpr size_t kMaxStackBytes = size_t{32} << 20;

  struct Sample {
    int64_t time_ns;
    uint64_t thread;
    uint32_t stack;  // index into stacks
  };
  struct Contents {
    std::vector<Sample> samples;
    std::vector<std::string> stacks;
    uint64_t dropped = 0;
  };

  explicit HostSampleBuffer(size_t max_samples = kMaxSamples,
                            size_t max_stack_bytes = kMaxStackBytes)
      : max_samples_(max_samples), max_stack_bytes_(max_stack_bytes) {}

  void Add(int64_t time_ns, uint64_t thread, const std::string& stack);
  // What was added since the last Take (the buffer is empty afterwards).
  Contents Take();

  // Moves samples into timeline (interned, sorted by time), keeping only those inside a
  // stretch of at least launch_gap_max_ns without a CUDA call of their thread, outside any
  // call (the others are no evidence for host work); a warning counts the dropped ones.
  static void MoveInto(Contents contents, int64_t launch_gap_max_ns, Timeline* timeline);

 private:
  size_t max_samples_;
  size_t max_stack_bytes_;
  Contents contents_;
  absl::flat_hash_map<std::string, uint32_t> stack_ids_;
  size_t stack_bytes_ = 0;
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_SESSION_HOST_SAMPLES_H_
