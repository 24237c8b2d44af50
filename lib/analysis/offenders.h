// Offenders: the places in the program that caused the most idle time, summed per site over a
// rank's steady-state idle pieces, and merged across ranks.
#ifndef GPUIDLE_LIB_ANALYSIS_OFFENDERS_H_
#define GPUIDLE_LIB_ANALYSIS_OFFENDERS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analysis/attribution.h"
#include "analysis/host_stacks.h"
#include "analysis/timeline_index.h"
#include "gpuidle/report.h"
#include "model/timeline.h"

namespace gpuidle::internal {

// Sums idle time per program site; strings are built only for the sites that are reported.
class OffenderTable {
 public:
  OffenderTable(const TimelineIndex& index, const HostStacks& stacks)
      : index_(index), stacks_(stacks) {}

  // Adds a steady-state idle piece of `device` to its site's entry.
  void Add(const DeviceTimeline& device, const IdlePiece& piece);

  // The n sites with the most idle time, most first.
  std::vector<Offender> Top(int n) const;

 private:
  struct Key {
    Subcause subcause;
    StringId what;
    int32_t site;   // index into sites_, -1 if none
    int32_t stack;  // HostStacks evidence, -1 if none
    bool operator==(const Key&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.subcause, k.what, k.site, k.stack);
    }
  };
  struct Entry {
    int64_t idle_ns = 0;
    int64_t count = 0;
    int32_t last_gap = -1;
    const DeviceTimeline* last_device = nullptr;
  };

  // Sites are interned by the enclosing framework op and Python frame (range ids), so that
  // the strings are built once per distinct site.
  int32_t SiteId(uint64_t thread, int64_t t);

  const TimelineIndex& index_;
  const HostStacks& stacks_;
  absl::flat_hash_map<Key, Entry> entries_;
  absl::flat_hash_map<std::pair<StringId, StringId>, int32_t> site_ids_;
  std::vector<std::string> sites_;
  // The last SiteId query and its answer: the pieces of one gap ask about the same call.
  uint64_t last_site_thread_ = 0;
  int64_t last_site_time_ = 0;
  int32_t last_site_ = -1;
};

// The offenders of several ranks as one list, most idle first, at most max_offenders.
std::vector<Offender> MergeOffenders(std::vector<Offender> offenders, int max_offenders);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_ANALYSIS_OFFENDERS_H_
