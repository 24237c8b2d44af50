// Every steady-state gap of one process, for drawing them all (report/trace_writer.h): the idle
// pieces whose causes sum to each device's idle time, where Report::longest_gaps holds only the
// longest few. The analysis makes it (analysis/analyze.h ListGaps, AnalyzeWithGaps); writers
// only draw it.
#ifndef GPUIDLE_LIB_MODEL_GAP_LIST_H_
#define GPUIDLE_LIB_MODEL_GAP_LIST_H_

#include <cstdint>
#include <vector>

#include "gpuidle/report.h"

namespace gpuidle::internal {

// Long runs have millions of gaps: a list holds at most a chosen number, the longest (ties: the
// earlier), and `devices` says how many each device had in all.
struct GapList {
  struct DeviceGaps {
    int device = 0;
    int64_t gaps = 0;     // every steady-state gap of the device, listed or not
    int64_t idle_ns = 0;  // their total length (DeviceReport::idle_ns)
  };
  std::vector<GapRecord> gaps;  // sorted by device, then start
  std::vector<DeviceGaps> devices;
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_MODEL_GAP_LIST_H_
