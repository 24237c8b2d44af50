#include "analysis/communication.h"

#include <algorithm>
#include <limits>

namespace gpuidle::internal {

std::vector<Interval> KernelUnion(const DeviceTimeline& d, Interval window, bool communication) {
  std::vector<Interval> out;
  for (const DeviceOp& op : d.ops) {
    if (op.kind != OpKind::kKernel || op.communication != communication) continue;
    const int64_t s = std::max(op.start_ns, window.start_ns);
    const int64_t e = std::min(op.end_ns, window.end_ns);
    if (e <= s) continue;
    if (!out.empty() && s <= out.back().end_ns) {
      out.back().end_ns = std::max(out.back().end_ns, e);
    } else {
      out.push_back({s, e});
    }
  }
  return out;
}

int64_t TotalLength(const std::vector<Interval>& v) {
  int64_t total = 0;
  for (const Interval& i : v) total += i.end_ns - i.start_ns;
  return total;
}

int64_t LengthNotCovered(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  int64_t total = 0;
  size_t j = 0;
  for (const Interval& x : a) {
    int64_t cursor = x.start_ns;
    while (j < b.size() && b[j].end_ns <= cursor) ++j;
    for (size_t k = j; k < b.size() && b[k].start_ns < x.end_ns; ++k) {
      if (b[k].start_ns > cursor) total += b[k].start_ns - cursor;
      cursor = std::max(cursor, b[k].end_ns);
    }
    if (x.end_ns > cursor) total += x.end_ns - cursor;
  }
  return total;
}

void AddCommWait(std::span<const Timeline* const> ranks, Report* report) {
  if (ranks.size() < 2) return;
  struct Comm {
    int64_t start, end;
  };
  // Device position d of each rank: the i-th used device of each rank is matched.
  size_t used = std::numeric_limits<size_t>::max();
  for (const Timeline* t : ranks) used = std::min(used, t->devices.size());
  for (size_t d = 0; d < used; ++d) {
    std::vector<std::vector<Comm>> per_rank;
    size_t count = std::numeric_limits<size_t>::max();
    for (const Timeline* t : ranks) {
      std::vector<Comm>& comms = per_rank.emplace_back();
      for (const DeviceOp& op : t->devices[d].ops) {
        if (op.kind == OpKind::kKernel && op.communication)
          comms.push_back({op.start_ns, op.end_ns});
      }
      count = std::min(count, comms.size());
    }
    // Each rank's device report, for its steady state: waits in start-up (the first
    // collectives, while ranks initialise at different speeds) are not the headline's.
    std::vector<DeviceReport*> reports(ranks.size(), nullptr);
    for (size_t r = 0; r < ranks.size(); ++r) {
      const int device = ranks[r]->devices[d].device;
      const int rank = ranks[r]->info.rank.value_or(static_cast<int>(r));
      for (DeviceReport& dr : report->devices) {
        if (dr.device == device && dr.rank.value_or(-1) == rank) reports[r] = &dr;
      }
    }
    std::vector<int64_t> wait(ranks.size(), 0);
    for (size_t k = 0; k < count; ++k) {
      int64_t latest = std::numeric_limits<int64_t>::min();
      for (const auto& comms : per_rank) latest = std::max(latest, comms[k].start);
      for (size_t r = 0; r < ranks.size(); ++r) {
        const Comm& c = per_rank[r][k];
        if (reports[r] == nullptr || c.start < reports[r]->steady_start_ns ||
            c.start >= reports[r]->steady_end_ns) {
          continue;
        }
        wait[r] += std::clamp<int64_t>(latest - c.start, 0, c.end - c.start);
      }
    }
    for (size_t r = 0; r < ranks.size(); ++r) {
      if (reports[r] != nullptr) reports[r]->comm_wait_ns = wait[r];
    }
  }
}

}  // namespace gpuidle::internal
