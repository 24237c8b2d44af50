#include "analysis/range_index.h"

#include <algorithm>

namespace gpuidle::internal {
namespace {

// Ranges that overlap without nesting (each starting inside the last and ending after it) chain
// as parents without bound; a walk up stops after this many, far deeper than any real stack, so
// that a query costs at most this much (issue 29's complexity budget).
constexpr int kMaxWalk = 1024;

}  // namespace

RangeIndex::RangeIndex(const Timeline& timeline, const std::function<bool(const Range&)>& keep)
    : timeline_(timeline) {
  // timeline.ranges is sorted by start; ties put the longer (outer) range first so that a
  // range that starts together with its child still becomes its parent.
  std::vector<int32_t> order;
  for (size_t i = 0; i < timeline.ranges.size(); ++i) {
    if (keep(timeline.ranges[i])) order.push_back(static_cast<int32_t>(i));
  }
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    const Range& ra = timeline.ranges[a];
    const Range& rb = timeline.ranges[b];
    if (ra.start_ns != rb.start_ns) return ra.start_ns < rb.start_ns;
    return ra.end_ns > rb.end_ns;
  });
  absl::flat_hash_map<uint64_t, std::vector<int32_t>> stacks;
  for (int32_t r : order) {
    const Range& range = timeline.ranges[r];
    std::vector<Node>& nodes = by_thread_[range.thread];
    std::vector<int32_t>& stack = stacks[range.thread];
    while (!stack.empty() && timeline.ranges[nodes[stack.back()].range].end_ns <= range.start_ns) {
      stack.pop_back();
    }
    const int32_t parent = stack.empty() ? kNone : stack.back();
    nodes.push_back(Node{range.start_ns, r, parent});
    stack.push_back(static_cast<int32_t>(nodes.size() - 1));
  }
}

const std::vector<RangeIndex::Node>* RangeIndex::NodesOf(uint64_t thread) const {
  auto it = by_thread_.find(thread);
  return it == by_thread_.end() ? nullptr : &it->second;
}

int32_t RangeIndex::LastStartedAtOrBefore(const std::vector<Node>& nodes, int64_t t) const {
  auto it = std::upper_bound(nodes.begin(), nodes.end(), t,
                             [](int64_t v, const Node& n) { return v < n.start_ns; });
  return it == nodes.begin() ? kNone : static_cast<int32_t>(it - nodes.begin() - 1);
}

int32_t RangeIndex::InnermostMatching(uint64_t thread, int64_t t,
                                      const std::function<bool(const Range&)>& accept) const {
  const std::vector<Node>* nodes = NodesOf(thread);
  if (nodes == nullptr) return kNone;
  int steps = 0;
  for (int32_t n = LastStartedAtOrBefore(*nodes, t); n != kNone && steps < kMaxWalk;
       n = (*nodes)[n].parent, ++steps) {
    const Range& r = timeline_.ranges[(*nodes)[n].range];
    if (r.end_ns > t && accept(r)) return (*nodes)[n].range;
  }
  return kNone;
}

int32_t RangeIndex::Innermost(uint64_t thread, int64_t t) const {
  return InnermostMatching(thread, t, [](const Range&) { return true; });
}

int32_t RangeIndex::Outermost(uint64_t thread, int64_t t) const {
  const std::vector<Node>* nodes = NodesOf(thread);
  if (nodes == nullptr) return kNone;
  int32_t found = kNone;
  int steps = 0;
  for (int32_t n = LastStartedAtOrBefore(*nodes, t); n != kNone && steps < kMaxWalk;
       n = (*nodes)[n].parent, ++steps) {
    if (timeline_.ranges[(*nodes)[n].range].end_ns > t) found = (*nodes)[n].range;
  }
  return found;
}

std::vector<int32_t> RangeIndex::Enclosing(uint64_t thread, int64_t t) const {
  std::vector<int32_t> out;
  const std::vector<Node>* nodes = NodesOf(thread);
  if (nodes == nullptr) return out;
  int steps = 0;
  for (int32_t n = LastStartedAtOrBefore(*nodes, t); n != kNone && steps < kMaxWalk;
       n = (*nodes)[n].parent, ++steps) {
    if (timeline_.ranges[(*nodes)[n].range].end_ns > t) out.push_back((*nodes)[n].range);
  }
  return out;
}

std::vector<uint64_t> RangeIndex::Threads() const {
  std::vector<uint64_t> out;
  for (const auto& [thread, nodes] : by_thread_) out.push_back(thread);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int32_t> RangeIndex::Roots(uint64_t thread) const {
  std::vector<int32_t> roots;
  if (const std::vector<Node>* nodes = NodesOf(thread)) {
    for (const Node& n : *nodes) {
      if (n.parent == kNone) roots.push_back(n.range);
    }
  }
  return roots;
}

}  // namespace gpuidle::internal
