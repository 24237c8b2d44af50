// The one clock of a live capture: CUPTI's. CUPTI stamps every record with its own normalised
// clock (CLOCK_REALTIME on Linux); gpuidle's host ranges read the same clock through
// cuptiGetTimestamp while collecting, so host and device times line up.
//
// gpuidle does not replace CUPTI's clock with a timestamp callback: on the H200 the callback
// cost ~0.65 us per kernel launch in the tiny-kernel benchmark (docs/PERFORMANCE.md).
#ifndef GPUIDLE_LIB_COLLECT_CLOCK_H_
#define GPUIDLE_LIB_COLLECT_CLOCK_H_

#include <cstdint>

namespace gpuidle::internal {

// Now on the timeline's clock: the source set by SetTimelineClock, else CLOCK_REALTIME (what
// CUPTI uses by default on Linux).
int64_t TimelineNowNs();

// Makes TimelineNowNs read source (CUPTI's clock); nullptr goes back to CLOCK_REALTIME.
void SetTimelineClock(int64_t (*source)());

// CLOCK_MONOTONIC, for timing gpuidle's own work (what a start or stop cost).
int64_t SteadyNowNs();

// Unix time minus timeline time, in nanoseconds, measured now: add it to a timestamp of the
// timeline to get wall-clock time (about 0 while CUPTI uses CLOCK_REALTIME).
int64_t WallClockOffsetNs();

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_COLLECT_CLOCK_H_
