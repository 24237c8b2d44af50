// A stable sort for sequences made of a few sorted runs, as timelines are: producers append
// runs that are sorted already (a CUPTI buffer, a thread's calls, a recorder's ranges), often a
// single one. Merging the runs is one pass when there is one and log2(runs) passes for a few,
// where std::stable_sort moves every element about log2(n) times.
#ifndef GPUIDLE_LIB_MODEL_STABLE_SORT_H_
#define GPUIDLE_LIB_MODEL_STABLE_SORT_H_

#include <algorithm>
#include <cstddef>
#include <vector>

namespace gpuidle::internal {

// Sorts v by key(element) (compared with <), stably: the order std::stable_sort gives.
// Neighbouring runs are merged left before right among equal keys, which keeps it stable. Many
// short runs (unsorted input) go to std::stable_sort.
template <typename T, typename Key>
void StableSortByKey(std::vector<T>& v, const Key& key) {
  std::vector<size_t> run_starts = {0};
  for (size_t i = 1; i < v.size(); ++i) {
    if (key(v[i]) < key(v[i - 1])) run_starts.push_back(i);
  }
  if (run_starts.size() == 1) return;
  const auto less = [&](const T& a, const T& b) { return key(a) < key(b); };
  if (run_starts.size() > v.size() / 8) {
    std::stable_sort(v.begin(), v.end(), less);
    return;
  }
  // Neighbouring runs merged in place, level by level: std::inplace_merge buffers only the
  // shorter of its two runs, where a merge into a copy would touch twice the memory.
  const auto at = [&](size_t i) { return v.begin() + static_cast<std::ptrdiff_t>(i); };
  std::vector<size_t> merged;
  while (run_starts.size() > 1) {
    merged.clear();
    for (size_t r = 0; r < run_starts.size(); r += 2) {
      merged.push_back(run_starts[r]);
      if (r + 1 == run_starts.size()) break;
      const size_t end = r + 2 < run_starts.size() ? run_starts[r + 2] : v.size();
      std::inplace_merge(at(run_starts[r]), at(run_starts[r + 1]), at(end), less);
    }
    run_starts.swap(merged);
  }
}

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_MODEL_STABLE_SORT_H_
