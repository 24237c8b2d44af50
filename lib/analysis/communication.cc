#include "analysis/communication.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/strip.h"

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

std::string CollectiveOpOfKernel(absl::string_view name) {
  name = name.substr(0, name.find('('));
  for (absl::string_view prefix : {"ncclDevKernel_", "ncclKernel_"}) {
    if (absl::ConsumePrefix(&name, prefix)) {
      return absl::AsciiStrToLower(name.substr(0, name.find('_')));
    }
  }
  return std::string(name);
}

namespace {

// Length of [s, e) not covered by `covered` (sorted, disjoint).
int64_t Uncovered(int64_t s, int64_t e, const std::vector<Interval>& covered) {
  auto it = std::lower_bound(covered.begin(), covered.end(), s,
                             [](const Interval& c, int64_t v) { return c.end_ns <= v; });
  int64_t total = 0;
  for (int64_t cursor = s; cursor < e; ++it) {
    if (it == covered.end() || it->start_ns >= e) {
      total += e - cursor;
      break;
    }
    if (it->start_ns > cursor) total += it->start_ns - cursor;
    cursor = std::max(cursor, it->end_ns);
  }
  return total;
}

}  // namespace

void AddCollectives(const Timeline& t, const DeviceTimeline& d, Interval window,
                    const std::vector<Interval>& compute, DeviceReport* report) {
  const Interval steady{report->steady_start_ns, report->steady_end_ns};
  absl::flat_hash_map<std::pair<std::string, std::string>, int32_t> kinds;
  std::vector<CollectiveTiming> start_up, rest;  // rows before the steady state, and from it
  for (const DeviceOp& op : d.ops) {
    if (op.kind != OpKind::kKernel || !op.communication) continue;
    if (op.end_ns <= window.start_ns || op.start_ns >= window.end_ns) continue;
    const CollectiveArgs* args =
        op.collective < t.collectives.size() ? &t.collectives[op.collective] : nullptr;
    std::string group = args ? std::string(t.strings.Get(args->group)) : "";
    std::string name = args && args->op != StringTable::kEmpty
                           ? std::string(t.strings.Get(args->op))
                           : CollectiveOpOfKernel(t.strings.Get(op.name));
    auto [it, added] = kinds.try_emplace(std::pair(std::move(group), std::move(name)),
                                         static_cast<int32_t>(report->collectives.size()));
    if (added) {
      CollectiveStats& k = report->collectives.emplace_back();
      k.group = it->first.first;
      k.op = it->first.second;
    }
    const CollectiveTiming row{op.start_ns, op.end_ns, args ? args->seq : -1,
                               args ? args->bytes : -1, it->second};
    (op.start_ns < steady.start_ns ? start_up : rest).push_back(row);
    if (op.start_ns < steady.start_ns || op.start_ns >= steady.end_ns) continue;
    CollectiveStats& k = report->collectives[it->second];
    const int64_t s = std::max(op.start_ns, steady.start_ns);
    const int64_t e = std::min(op.end_ns, steady.end_ns);
    ++k.count;
    k.ns += e - s;
    k.exposed_ns += Uncovered(s, e, compute);
    if (row.bytes >= 0) k.bytes = k.bytes.value_or(0) + row.bytes;
  }
  // A contiguous stretch of at most kMaxCollectiveRows: the steady state's first, then as many
  // of the start-up's last as fit.
  const size_t keep = std::min(rest.size(), DeviceReport::kMaxCollectiveRows);
  const size_t before = std::min(start_up.size(), DeviceReport::kMaxCollectiveRows - keep);
  std::vector<CollectiveTiming>& rows = report->collective_timings;
  rows.assign(start_up.end() - static_cast<ptrdiff_t>(before), start_up.end());
  rows.insert(rows.end(), rest.begin(), rest.begin() + static_cast<ptrdiff_t>(keep));
  report->collectives_not_listed =
      static_cast<int64_t>(start_up.size() + rest.size() - rows.size());
  SortCollectives(report);
}

void SortCollectives(DeviceReport* report) {
  // Most time first; the rows follow their kinds.
  std::vector<int32_t> order(report->collectives.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return report->collectives[a].ns > report->collectives[b].ns;
  });
  std::vector<int32_t> position(order.size());
  std::vector<CollectiveStats> sorted;
  for (size_t i = 0; i < order.size(); ++i) {
    position[order[i]] = static_cast<int32_t>(i);
    sorted.push_back(std::move(report->collectives[order[i]]));
  }
  report->collectives = std::move(sorted);
  for (CollectiveTiming& row : report->collective_timings) row.kind = position[row.kind];
}

void AddCollectivesOf(const DeviceReport& from, DeviceReport* to) {
  std::vector<int32_t> kind_of(from.collectives.size());
  // Kinds by group and op: a lookup per kind, not a search (issue 29's complexity budget).
  absl::flat_hash_map<std::pair<std::string, std::string>, int32_t> index;
  index.reserve(to->collectives.size() + from.collectives.size());
  for (size_t k = 0; k < to->collectives.size(); ++k) {
    index.try_emplace({to->collectives[k].group, to->collectives[k].op}, static_cast<int32_t>(k));
  }
  for (size_t k = 0; k < from.collectives.size(); ++k) {
    const CollectiveStats& f = from.collectives[k];
    const auto [it, added] =
        index.try_emplace({f.group, f.op}, static_cast<int32_t>(to->collectives.size()));
    kind_of[k] = it->second;
    if (added) {
      to->collectives.push_back(f);
      continue;
    }
    CollectiveStats* same = &to->collectives[static_cast<size_t>(it->second)];
    same->count += f.count;
    same->ns += f.ns;
    same->exposed_ns += f.exposed_ns;
    if (f.bytes) same->bytes = same->bytes.value_or(0) + *f.bytes;
    if (f.wait_ns) same->wait_ns = same->wait_ns.value_or(0) + *f.wait_ns;
  }
  for (const CollectiveTiming& row : from.collective_timings) {
    if (to->collective_timings.size() >= DeviceReport::kMaxCollectiveRows) {
      ++to->collectives_not_listed;
      continue;
    }
    CollectiveTiming& added = to->collective_timings.emplace_back(row);
    added.kind = kind_of[static_cast<size_t>(row.kind)];
  }
  to->collectives_not_listed += from.collectives_not_listed;
  SortCollectives(to);
}

}  // namespace gpuidle::internal
