// Generated one-process reports of a data-parallel job with a known answer, for the merge of
// ranks (tests/analysis/rank_merge_test.cc) and its benchmark: a straggler, hosts whose clocks
// differ, missing ranks, ranks whose windows begin and end on different collectives.
#ifndef GPUIDLE_TESTS_TESTING_RANK_REPORTS_H_
#define GPUIDLE_TESTS_TESTING_RANK_REPORTS_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gpuidle/report.h"

namespace gpuidle::testing {

struct JobSpec {
  int world_size = 8;
  int ranks_per_host = 8;
  int steps = 50;
  int collectives_per_step = 4;
  int64_t step_ns = 100'000'000;      // one step: compute, then the collectives
  int64_t collective_ns = 1'000'000;  // a collective's transfer, once every rank has arrived
  std::optional<int> straggler;       // arrives late_ns late at each step's first collective
  int64_t late_ns = 20'000'000;
  int64_t jitter_ns = 3'000;  // arrival spread of the punctual ranks (deterministic)
  // Host h's clock reads host_offset_ns * h (+ a few us) more than the job's true time.
  int64_t host_offset_ns = 0;
  bool wall_clock_prior = false;  // give each rank its host's offset, within a millisecond
  std::set<int> missing;          // ranks with no report
  bool ragged_edges = true;       // rank r misses its first r % 3 and last r % 2 collectives
  bool with_seq = false;          // rows carry the trace's sequence numbers
  int kinds = 1;                  // collective k is of kind k % kinds (op "allreduce<kind>")
};

// The true start of collective k of the job (before any clock offset).
inline int64_t CollectiveStart(const JobSpec& s, int k) {
  const int step = k / s.collectives_per_step;
  const int within = k % s.collectives_per_step;
  return 1'000'000'000 + int64_t{step} * s.step_ns + 5'000'000 +
         int64_t{within} * (s.collective_ns + s.late_ns + 2'000'000);
}

// How much host h's clock reads ahead of the job's.
inline int64_t HostClock(const JobSpec& s, int host) {
  return host * s.host_offset_ns + (host > 0 ? 7'123 * host : 0);
}

inline Report RankReportOf(const JobSpec& s, int rank) {
  const int host = rank / s.ranks_per_host;
  const int64_t clock = HostClock(s, host);
  const int total = s.steps * s.collectives_per_step;
  const int first = s.ragged_edges ? rank % 3 : 0;
  const int last = total - (s.ragged_edges ? rank % 2 : 0);
  Report r;
  r.source = "generated";
  RankReport& rr = r.ranks.emplace_back();
  rr.rank = rank;
  rr.host = "node" + std::to_string(host);
  rr.world_size = s.world_size;
  if (s.wall_clock_prior) rr.wall_clock_offset_ns = -clock + 1'700'000'000'000'000'000 + 400'000;
  DeviceReport& d = r.devices.emplace_back();
  d.rank = rank;
  d.device = rank % s.ranks_per_host;
  d.name = "NVIDIA H200";
  d.window_start_ns = 1'000'000'000 + clock;
  d.window_end_ns = d.window_start_ns + int64_t{s.steps} * s.step_ns + s.step_ns;
  d.window_ns = d.window_end_ns - d.window_start_ns;
  d.steady_start_ns = d.window_start_ns;
  d.steady_end_ns = d.window_end_ns;
  const bool straggler = s.straggler == rank;
  // The straggler's own time: its late arrival is host work between steps.
  const int64_t steady = d.steady_end_ns - d.steady_start_ns;
  d.idle[Subcause::kHost] = straggler ? int64_t{s.steps} * s.late_ns : steady / 50;
  d.idle[Subcause::kLaunchOverhead] = steady / 100;
  d.idle_ns = d.idle.TotalNs();
  d.busy_ns = steady - d.idle_ns;
  d.step_count = s.steps;
  for (int k = 0; k < std::max(s.kinds, 1); ++k) {
    CollectiveStats& kind = d.collectives.emplace_back();
    kind.group = "0";
    kind.op = s.kinds > 1 ? "allreduce" + std::to_string(k) : "allreduce";
  }
  r.window_start_ns = d.window_start_ns;
  r.window_end_ns = d.window_end_ns;
  uint64_t noise = 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(rank + 1);
  for (int k = first; k < last; ++k) {
    noise = noise * 6364136223846793005ull + 1442695040888963407ull;
    const int64_t jitter =
        s.jitter_ns > 0 ? static_cast<int64_t>((noise >> 33) % static_cast<uint64_t>(s.jitter_ns))
                        : 0;
    const int64_t start = CollectiveStart(s, k);
    const bool first_of_step = k % s.collectives_per_step == 0;
    const int64_t arrival = start + (straggler && first_of_step ? s.late_ns : 0) + jitter;
    const int64_t end =
        start + (s.straggler && first_of_step ? s.late_ns : 0) + s.jitter_ns + s.collective_ns;
    CollectiveTiming& row = d.collective_timings.emplace_back();
    row.kind = k % std::max(s.kinds, 1);
    CollectiveStats& kind = d.collectives[static_cast<size_t>(row.kind)];
    row.start_ns = arrival + clock;
    row.end_ns = end + clock + static_cast<int64_t>((noise >> 20) % 2'000);
    row.seq = s.with_seq ? k : -1;
    row.bytes = 100 << 20;
    ++kind.count;
    kind.ns += row.end_ns - row.start_ns;
    d.comm_ns += row.end_ns - row.start_ns;
  }
  int64_t count = 0;
  for (CollectiveStats& kind : d.collectives) {
    kind.exposed_ns = kind.ns;
    count += kind.count;
  }
  d.exposed_comm_ns = d.comm_ns;
  d.kernel_count = count * 3;
  return r;
}

// The reports of every rank not in s.missing, by rank.
inline std::vector<Report> JobReports(const JobSpec& s) {
  std::vector<Report> out;
  for (int r = 0; r < s.world_size; ++r) {
    if (!s.missing.contains(r)) out.push_back(RankReportOf(s, r));
  }
  return out;
}

}  // namespace gpuidle::testing

#endif  // GPUIDLE_TESTS_TESTING_RANK_REPORTS_H_
