// Call sites named by a language binding (gpuidle::SetCallSiteProvider, which sets the provider
// here): while collecting, the
// collector asks the provider at the start of each traced launch, sync and copy call (CUPTI's
// API_ENTER callback, on the calling thread) and keeps (correlation id, site). When the
// collection stops, each site becomes a Python-frame range spanning exactly its call, so the
// analysis finds it where it looks for PyTorch's with_stack frames.
#ifndef GPUIDLE_LIB_COLLECT_CALL_SITES_H_
#define GPUIDLE_LIB_COLLECT_CALL_SITES_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "model/timeline.h"

namespace gpuidle::internal {

// Returns the place calling CUDA on this thread, or nullptr (gpuidle/profiler.h says more).
using SiteFunction = const char* (*)();
void SetSiteFunction(SiteFunction f);
SiteFunction CurrentCallSiteProvider();

// Written at CUDA calls on the program's threads, so no lock is shared between them: each thread
// appends to a shard of its own (its lock is taken by another thread only when a collection
// stops or starts).
class CallSiteLog {
 public:
  CallSiteLog();
  // Keeps at most `limit` sites (bounded memory on long runs); counts the rest.
  void Reset(size_t limit);
  void Add(uint64_t correlation_id, const char* site);
  // A site sampled on a thread at at_ns (a launch storm's line): the site of that thread's
  // calls until its next sample, for at most span_ns. A null site means the thread had no
  // Python line (autograd's backward threads): the sample takes the call-site range open on
  // another thread at that moment (the `loss.backward()` that the work is done for), if any.
  void AddSample(uint64_t thread, int64_t at_ns, int64_t span_ns, const char* site);
  // Adds a kPython range for each site whose call is in the timeline, and one for each sample;
  // forgets them. Call after the host ranges are in the timeline (samples without a site look
  // for them).
  void MoveInto(Timeline* timeline);
  uint64_t overflowed() const;

 private:
  struct Sample {
    uint64_t thread;
    int64_t at_ns;
    int64_t span_ns;
    const char* site;
  };
  struct Shard {
    std::mutex mu;
    std::vector<std::pair<uint64_t, const char*>> sites;
    std::vector<Sample> samples;
  };
  // This thread's shard, made on its first call (the only time shards_mu_ is taken then).
  Shard& ThisThreadsShard();
  // Whether one more entry fits under the limit (else it is counted).
  bool Admit();

  const uint64_t id_;  // tells a thread's cached shard of this log from one of an earlier log
  std::atomic<size_t> used_{0};
  std::atomic<size_t> limit_{0};
  std::atomic<uint64_t> overflowed_{0};
  std::mutex shards_mu_;
  std::vector<std::unique_ptr<Shard>> shards_;  // never shrinks: threads keep pointers to them
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_COLLECT_CALL_SITES_H_
