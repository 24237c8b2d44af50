// Detaching CUPTI from the process when a collection stops in the middle of a program
// (CuptiAfterStop::kDetach). Once it has traced, CUPTI keeps intercepting the program's CUDA
// calls after every kind and callback is off, until cuptiFinalize (what that costs:
// docs/PERFORMANCE.md). CUPTI's guidance is to finalize at the exit of a CUDA call, where no thread
// is half-way through its instrumentation; Kineto waits for the program's next call. gpuidle makes
// one itself (cuDeviceGetCount) with a callback at its exit, so the detach happens inside Stop and
// never depends on what the program does next.
#ifndef GPUIDLE_LIB_COLLECT_CUPTI_DETACH_H_
#define GPUIDLE_LIB_COLLECT_CUPTI_DETACH_H_

#include "collect/cupti_api.h"

namespace gpuidle::internal {

// Subscribes a detach callback and makes the CUDA call (cuda_call) that triggers it. True if
// CUPTI detached; false leaves CUPTI attached, as it was (no driver to call, the callback never
// came, or cuptiFinalize failed). Not thread-safe: one collector calls it, outside callbacks.
bool DetachCupti(const CuptiApi& api, int (*cuda_call)());

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_COLLECT_CUPTI_DETACH_H_
