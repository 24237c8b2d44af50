#include "collect/clock.h"

#include <time.h>

#include <atomic>

namespace gpuidle::internal {
namespace {

int64_t NowNs(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::atomic<int64_t (*)()> timeline_clock{nullptr};

// other - timeline, with the timeline read on both sides of the other clock.
int64_t OffsetTo(clockid_t other) {
  const int64_t before = TimelineNowNs();
  const int64_t value = NowNs(other);
  const int64_t after = TimelineNowNs();
  return value - (before + (after - before) / 2);
}

}  // namespace

int64_t TimelineNowNs() {
  int64_t (*source)() = timeline_clock.load(std::memory_order_acquire);
  return source != nullptr ? source() : NowNs(CLOCK_REALTIME);
}

void SetTimelineClock(int64_t (*source)()) {
  timeline_clock.store(source, std::memory_order_release);
}

int64_t SteadyNowNs() { return NowNs(CLOCK_MONOTONIC); }

int64_t WallClockOffsetNs() { return OffsetTo(CLOCK_REALTIME); }

}  // namespace gpuidle::internal
