#include "analysis/rank_merge.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "analysis/advice.h"
#include "analysis/gap_records.h"
#include "analysis/job_checks.h"
#include "analysis/offenders.h"
#include "analysis/periodic_work.h"
#include "analysis/serving.h"
#include "analysis/timeline_summary.h"
#include "model/report_names.h"
#include "model/timeline.h"

namespace gpuidle::internal {
namespace {

// The ends of one collective on its ranks agree within microseconds (every rank leaves the kernel
// when the last data arrives); a row of another rank whose end is farther than this from every
// end of the reference rank's collectives of its kind is not matched.
constexpr int64_t kMatchToleranceNs = 1'000'000;
// How many rows of the reference rank seed the estimate of another host's clock offset, and how
// many of the offsets they suggest (the nearest the prior) are tried.
constexpr size_t kOffsetSeeds = 16;
constexpr size_t kOffsetCandidates = 64;
// Clock offsets closer than this to their prior are the prior.
constexpr int64_t kClockResolutionNs = 50'000;
// A rank arrived last at a collective when it started at least this much after every other.
constexpr int64_t kArrivedLastMinNs = 50'000;
// A rank is a straggler when the others waited for it alone at least this share of all such
// waiting, and at least this share of the job's steady state (median over the ranks).
constexpr double kStragglerMinShareOfLateness = 0.25;
constexpr double kStragglerMinShareOfSteadyState = 0.02;
// Every device lists at least its first steps while Report::kMaxStepRows allows it.
constexpr size_t kMinStepRowsPerDevice = 20;

// Time stamps shifted by clock offsets (issue 29: hostile reports overflowed here). Offsets stay
// within 2^60 ns either way, as the report reader requires of a rank's clock_offset_ns, and a
// shifted time stamp saturates rather than wrapping: an offset that large matches nothing.
constexpr int64_t kMaxClockOffsetNs = int64_t{1} << 60;
int64_t ClampOffset(int64_t offset) {
  return std::clamp(offset, -kMaxClockOffsetNs, kMaxClockOffsetNs);
}
int64_t Shifted(int64_t time_ns, int64_t offset_ns) {
  int64_t out = 0;
  if (!__builtin_add_overflow(time_ns, offset_ns, &out)) return out;
  return offset_ns > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

// Step rows per device when `devices` share Report::kMaxStepRows: at least
// kMinStepRowsPerDevice, but never more than kMaxStepRows in all (a merged report is read back).
size_t StepRowsPerDevice(size_t devices) {
  devices = std::max<size_t>(devices, 1);
  const size_t share = Report::kMaxStepRows / devices;
  return devices * kMinStepRowsPerDevice <= Report::kMaxStepRows
             ? std::max(kMinStepRowsPerDevice, share)
             : share;
}

// A merged job's timelines share kMaxTimelineBins: 1024 ranks' devices at 600 bins each would
// make the report tens of megabytes; each device keeps at least a coarse outline.
constexpr size_t kMaxTimelineBins = 64 * TimelineSummary::kBins;
void CoarsenTimelines(Report* job) {
  const size_t devices = std::max<size_t>(job->devices.size(), 1);
  const size_t share = std::max<size_t>(kMaxTimelineBins / devices, 1);
  for (DeviceReport& d : job->devices) {
    const size_t bins = d.timeline.bins.size();
    if (bins > share) CoarsenTimeline(static_cast<int>((bins + share - 1) / share), &d.timeline);
  }
}

// A device with collectives: one participant of the collectives of its groups.
struct Participant {
  size_t device;  // index into the merged report's devices
  int rank;
  std::string clock;  // its host, or "rank N" where the host is unknown
  std::optional<int64_t> wall_clock_offset_ns;
  int64_t offset_ns = 0;  // added to its timestamps to put it on the reference's clock
  bool aligned = false;
};

// The rows of one participant in one group, by kind: indices into its collective_timings.
using RowsByKind = std::map<int32_t, std::vector<int32_t>>;

struct GroupMember {
  size_t participant;
  RowsByKind rows;  // kinds of the participant's own numbering
  size_t row_count = 0;
};

int64_t Median(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

// The steady state's span of a rank (its longest device's) that its collective tables cover:
// lateness, measured on the listed collectives, is weighed against it.
int64_t SteadySpan(const Report& r) {
  int64_t span = 0;
  for (const DeviceReport& d : r.devices) {
    int64_t count = 0, listed = 0;
    for (const CollectiveStats& k : d.collectives) count += k.count;
    for (const CollectiveTiming& row : d.collective_timings) {
      listed += row.start_ns >= d.steady_start_ns && row.start_ns < d.steady_end_ns ? 1 : 0;
    }
    const double covered = d.collectives_not_listed > 0 && count > 0
                               ? static_cast<double>(listed) / static_cast<double>(count)
                               : 1.0;
    span = std::max(span,
                    static_cast<int64_t>(static_cast<double>(d.PhaseNs(Phase::kSteady)) * covered));
  }
  return span;
}

class CollectiveMatcher {
 public:
  CollectiveMatcher(Report* job, std::vector<Participant> participants)
      : job_(*job), p_(std::move(participants)) {}

  void Run();

 private:
  const DeviceReport& Device(size_t p) const { return job_.devices[p_[p].device]; }
  const CollectiveStats& Kind(size_t p, int32_t kind) const {
    return Device(p).collectives[static_cast<size_t>(kind)];
  }
  const CollectiveTiming& Row(size_t p, int32_t row) const {
    return Device(p).collective_timings[static_cast<size_t>(row)];
  }
  // The kind of participant `to` with the group and operation of `from`'s kind (-1: none).
  int32_t SameKind(size_t from, int32_t kind, size_t to) const;
  void MatchGroup(const std::vector<GroupMember>& members);
  // The offset that puts `m`'s clock on the reference's (docs/ANALYSIS.md, "Clocks").
  int64_t EstimateOffset(const GroupMember& ref, const GroupMember& m) const;
  // The offset made exact: the median end difference of the rows it matches.
  int64_t Refine(const GroupMember& ref, const GroupMember& m, int64_t offset) const;
  // How many of m's rows, shifted by `offset`, end within the tolerance of a reference row.
  size_t Fit(const GroupMember& ref, const GroupMember& m, int64_t offset) const;
  // The reference row of kind `ref_kind` whose end is nearest `end` (and unambiguous), or -1.
  int32_t Nearest(const GroupMember& ref, int32_t ref_kind, int64_t end) const;
  void AddStepWaits(const std::set<size_t>& waited);

  struct Wait {
    size_t participant;
    int32_t kind;
    int64_t start_ns;  // the collective's, on its own clock
    int64_t wait_ns;
  };
  struct Lateness {
    int64_t matched = 0, arrived_last = 0, late_ns = 0;
  };

  Report& job_;
  std::vector<Participant> p_;
  std::vector<Wait> waits_;              // steady-state collectives of complete instances
  std::map<int, Lateness> lateness_;     // by rank
  std::vector<int64_t> residuals_;       // |end - the reference's end|, aligned
  int64_t rows_ = 0, rows_matched_ = 0;  // rows of groups of two or more; matched in full
  bool any_offset_ = false;
  // Per participant, its kinds by group and operation (SameKind), built at first use.
  mutable std::vector<std::optional<absl::flat_hash_map<std::string, int32_t>>> kind_index_;
};

int32_t CollectiveMatcher::SameKind(size_t from, int32_t kind, size_t to) const {
  // Looked up by name, not searched: a job can list thousands of kinds (issue 29: the merge was
  // cubic in them). The first kind of a name wins, as the search did.
  if (kind_index_.size() < p_.size()) kind_index_.resize(p_.size());
  std::optional<absl::flat_hash_map<std::string, int32_t>>& index = kind_index_[to];
  const auto name = [](const CollectiveStats& k) { return absl::StrCat(k.group, "\n", k.op); };
  if (!index.has_value()) {
    index.emplace();
    const std::vector<CollectiveStats>& kinds = Device(to).collectives;
    for (size_t i = 0; i < kinds.size(); ++i)
      index->try_emplace(name(kinds[i]), static_cast<int32_t>(i));
  }
  const auto it = index->find(name(Kind(from, kind)));
  return it == index->end() ? -1 : it->second;
}

int32_t CollectiveMatcher::Nearest(const GroupMember& ref, int32_t ref_kind, int64_t end) const {
  const auto it = ref.rows.find(ref_kind);
  if (it == ref.rows.end()) return -1;
  const std::vector<int32_t>& rows = it->second;  // by start, hence by end within a kind
  const size_t p = ref.participant;
  auto pos = std::lower_bound(rows.begin(), rows.end(), end,
                              [&](int32_t r, int64_t v) { return Row(p, r).end_ns < v; });
  int32_t best = -1;
  auto at = rows.end();  // best's place in rows
  int64_t best_distance = std::numeric_limits<int64_t>::max();
  for (auto c : {pos - (pos != rows.begin() ? 1 : 0), pos}) {
    if (c == rows.end()) continue;
    const int64_t distance = std::abs(Row(p, *c).end_ns - end);
    if (distance < best_distance) best = *c, at = c, best_distance = distance;
  }
  if (best < 0 || best_distance > kMatchToleranceNs) return -1;
  // Nearer to this row than to its neighbours' midpoint: one collective, not the next one.
  for (auto n : {at - (at != rows.begin() ? 1 : 0), at + 1}) {
    if (n == rows.end() || *n == best) continue;
    if (2 * best_distance >= std::abs(Row(p, *n).end_ns - Row(p, best).end_ns)) return -1;
  }
  return best;
}

size_t CollectiveMatcher::Fit(const GroupMember& ref, const GroupMember& m, int64_t offset) const {
  size_t fit = 0;
  for (const auto& [kind, rows] : m.rows) {
    const int32_t ref_kind = SameKind(m.participant, kind, ref.participant);
    if (ref_kind < 0) continue;
    for (int32_t r : rows) {
      if (Nearest(ref, ref_kind, Shifted(Row(m.participant, r).end_ns, offset)) >= 0) ++fit;
    }
  }
  return fit;
}

int64_t CollectiveMatcher::EstimateOffset(const GroupMember& ref, const GroupMember& m) const {
  const Participant& mp = p_[m.participant];
  const Participant& rp = p_[ref.participant];
  int64_t prior = 0;
  if (mp.wall_clock_offset_ns && rp.wall_clock_offset_ns &&
      __builtin_sub_overflow(*mp.wall_clock_offset_ns, *rp.wall_clock_offset_ns, &prior)) {
    prior = 0;  // clocks that far apart say nothing
  }
  prior = ClampOffset(prior);
  // Rows with the trace's sequence numbers pair up without any clock: the offset is the median
  // difference of their ends.
  std::vector<int64_t> paired;
  for (const auto& [kind, rows] : m.rows) {
    // The reference may list a kind without rows of it (its table ended sooner).
    const auto ref_rows = ref.rows.find(SameKind(m.participant, kind, ref.participant));
    if (ref_rows == ref.rows.end()) continue;
    absl::flat_hash_map<int64_t, int64_t> ends;
    for (int32_t r : ref_rows->second) {
      if (Row(ref.participant, r).seq >= 0) {
        ends.emplace(Row(ref.participant, r).seq, Row(ref.participant, r).end_ns);
      }
    }
    for (int32_t r : rows) {
      const CollectiveTiming& row = Row(m.participant, r);
      if (const auto it = row.seq >= 0 ? ends.find(row.seq) : ends.end(); it != ends.end()) {
        paired.push_back(it->second - row.end_ns);
      }
    }
  }
  if (!paired.empty()) return ClampOffset(Median(std::move(paired)));
  const size_t half = std::min(ref.row_count, m.row_count) / 2;
  if (Fit(ref, m, prior) > half) {
    // Ends of one collective differ by microseconds across ranks: an offset that close to the
    // prior is the prior (ranks of one host keep one clock).
    const int64_t refined = Refine(ref, m, prior);
    return std::abs(refined - prior) > kClockResolutionNs ? refined : prior;
  }
  // Votes: the end differences of seed rows of the reference with every row of m of the kind.
  // The true offset gathers one vote per seed; the others scatter, or for a loop of equal steps
  // gather as well, at whole steps from it: of the offsets that gather, the one that matches the
  // most rows wins, and of equals the one nearest the prior.
  std::vector<int64_t> votes;
  for (const auto& [kind, rows] : m.rows) {
    const auto ref_rows_of = ref.rows.find(SameKind(m.participant, kind, ref.participant));
    if (ref_rows_of == ref.rows.end()) continue;
    const std::vector<int32_t>& ref_rows = ref_rows_of->second;
    const size_t n = ref_rows.size();
    for (size_t seed = 0; seed < std::min(n, kOffsetSeeds); ++seed) {
      // Spread over the rows, off any period of the program's loop.
      const size_t i = (seed * n / std::min(n, kOffsetSeeds) + seed) % n;
      for (int32_t r : rows) {
        votes.push_back(Row(ref.participant, ref_rows[i]).end_ns - Row(m.participant, r).end_ns);
      }
    }
  }
  if (votes.empty()) return prior;
  std::sort(votes.begin(), votes.end());
  struct Cluster {
    size_t count;
    int64_t offset;
  };
  std::vector<Cluster> clusters;
  for (size_t first = 0; first < votes.size();) {
    size_t last = first;
    while (last + 1 < votes.size() && votes[last + 1] - votes[first] <= kMatchToleranceNs / 4) {
      ++last;
    }
    clusters.push_back({last - first + 1, votes[first + (last - first) / 2]});
    first = last + 1;
  }
  size_t most = 0;
  for (const Cluster& c : clusters) most = std::max(most, c.count);
  std::erase_if(clusters, [&](const Cluster& c) { return 2 * c.count < most; });
  std::sort(clusters.begin(), clusters.end(), [&](const Cluster& x, const Cluster& y) {
    return std::abs(x.offset - prior) < std::abs(y.offset - prior);
  });
  if (clusters.size() > kOffsetCandidates) clusters.resize(kOffsetCandidates);
  int64_t best = prior;
  size_t best_fit = Fit(ref, m, prior);
  for (const Cluster& c : clusters) {
    const size_t fit = Fit(ref, m, c.offset);
    if (fit > best_fit) best = c.offset, best_fit = fit;
  }
  return Refine(ref, m, best);
}

int64_t CollectiveMatcher::Refine(const GroupMember& ref, const GroupMember& m,
                                  int64_t offset) const {
  std::vector<int64_t> differences;
  for (const auto& [kind, rows] : m.rows) {
    const int32_t ref_kind = SameKind(m.participant, kind, ref.participant);
    if (ref_kind < 0) continue;
    for (int32_t r : rows) {
      const int64_t end = Row(m.participant, r).end_ns;
      const int32_t match = Nearest(ref, ref_kind, Shifted(end, offset));
      if (match >= 0) differences.push_back(Row(ref.participant, match).end_ns - end);
    }
  }
  return ClampOffset(differences.empty() ? offset : Median(std::move(differences)));
}

void CollectiveMatcher::MatchGroup(const std::vector<GroupMember>& members) {
  // The reference: the participant with the most rows (the lowest rank among equals).
  size_t ref_index = 0;
  for (size_t i = 1; i < members.size(); ++i) {
    if (members[i].row_count > members[ref_index].row_count) ref_index = i;
  }
  const GroupMember& ref = members[ref_index];
  Participant& rp = p_[ref.participant];
  rp.aligned = true;  // the first reference's clock is the job's
  // Clocks: a host's offset is estimated once, from its first participant.
  std::map<std::string, int64_t> host_offsets{{rp.clock, rp.offset_ns}};
  for (size_t i = 0; i < members.size(); ++i) {
    if (i == ref_index) continue;
    Participant& mp = p_[members[i].participant];
    auto [it, added] = host_offsets.try_emplace(mp.clock, 0);
    if (added) {
      it->second =
          mp.aligned ? mp.offset_ns : ClampOffset(EstimateOffset(ref, members[i]) + rp.offset_ns);
    }
    if (!mp.aligned) mp.offset_ns = it->second, mp.aligned = true;
    any_offset_ |= mp.offset_ns != rp.offset_ns;
  }
  // Each reference row: the matching row of every member (-1: none).
  absl::flat_hash_map<int64_t, std::vector<int32_t>> instances;  // (kind << 32 | row) -> rows
  const auto key = [](int32_t kind, int32_t row) { return (int64_t{kind} << 32) | row; };
  for (size_t i = 0; i < members.size(); ++i) {
    const GroupMember& m = members[i];
    const Participant& mp = p_[m.participant];
    for (const auto& [kind, rows] : m.rows) {
      const int32_t ref_kind =
          i == ref_index ? kind : SameKind(m.participant, kind, ref.participant);
      rows_ += static_cast<int64_t>(rows.size());
      // The reference may list a kind without rows of it (its table ended sooner).
      const auto ref_rows = ref.rows.find(ref_kind);
      if (ref_rows == ref.rows.end()) continue;
      // By the trace's sequence numbers where both have them, else by the nearest end.
      absl::flat_hash_map<int64_t, int32_t> by_seq;
      for (int32_t r : ref_rows->second) {
        if (Row(ref.participant, r).seq >= 0) by_seq.emplace(Row(ref.participant, r).seq, r);
      }
      for (int32_t r : rows) {
        const CollectiveTiming& row = Row(m.participant, r);
        int32_t match = r;
        if (i != ref_index) {
          const auto s = row.seq >= 0 ? by_seq.find(row.seq) : by_seq.end();
          match = s != by_seq.end()
                      ? s->second
                      : Nearest(ref, ref_kind, Shifted(row.end_ns, mp.offset_ns - rp.offset_ns));
        }
        if (match < 0) continue;
        const CollectiveTiming& ref_row = Row(ref.participant, match);
        if (row.bytes >= 0 && ref_row.bytes >= 0 && row.bytes != ref_row.bytes) continue;
        std::vector<int32_t>& matched = instances[key(ref_kind, match)];
        if (matched.empty()) matched.assign(members.size(), -1);
        matched[i] = r;
      }
    }
  }
  // Complete instances (every member took part): waits, and who arrived last. In the reference's
  // row order, so that each member's rows are read in order rather than at random.
  std::vector<const std::pair<const int64_t, std::vector<int32_t>>*> in_order;
  in_order.reserve(instances.size());
  for (const auto& instance : instances) in_order.push_back(&instance);
  std::sort(in_order.begin(), in_order.end(),
            [](const auto* a, const auto* b) { return a->first < b->first; });
  for (const auto* instance : in_order) {
    const std::vector<int32_t>& matched = instance->second;
    if (std::count(matched.begin(), matched.end(), -1) > 0) continue;
    int64_t latest = std::numeric_limits<int64_t>::min();
    int64_t second = std::numeric_limits<int64_t>::min();
    size_t last = 0;
    for (size_t i = 0; i < members.size(); ++i) {
      const int64_t start = Shifted(Row(members[i].participant, matched[i]).start_ns,
                                    p_[members[i].participant].offset_ns);
      if (start > latest) {
        second = latest, latest = start, last = i;
      } else if (start > second) {
        second = start;
      }
    }
    const CollectiveTiming& ref_row = Row(ref.participant, matched[ref_index]);
    for (size_t i = 0; i < members.size(); ++i) {
      const size_t p = members[i].participant;
      const Participant& mp = p_[p];
      const CollectiveTiming& row = Row(p, matched[i]);
      ++rows_matched_;
      if (i != ref_index) {
        // Time stamps are at least -2^60: their negations fit; the difference saturates.
        const int64_t residual =
            Shifted(Shifted(row.end_ns, mp.offset_ns - rp.offset_ns), -ref_row.end_ns);
        residuals_.push_back(residual == std::numeric_limits<int64_t>::min()
                                 ? std::numeric_limits<int64_t>::max()
                                 : std::abs(residual));
      }
      const DeviceReport& d = Device(p);
      if (row.start_ns < d.steady_start_ns || row.start_ns >= d.steady_end_ns) continue;
      const int64_t wait = std::clamp<int64_t>(
          Shifted(latest, -Shifted(row.start_ns, mp.offset_ns)), 0, row.end_ns - row.start_ns);
      waits_.push_back({p, row.kind, row.start_ns, wait});
      Lateness& l = lateness_[mp.rank];
      ++l.matched;
      if (i == last && latest - second >= kArrivedLastMinNs) {
        ++l.arrived_last;
        l.late_ns += latest - second;
      }
    }
  }
}

void CollectiveMatcher::Run() {
  // Groups: the participants with rows in each process group ("" where the trace names none).
  std::map<std::string, std::vector<GroupMember>> groups;
  for (size_t p = 0; p < p_.size(); ++p) {
    const DeviceReport& d = Device(p);
    std::map<std::string, GroupMember> mine;
    // Each kind's group, looked up once per kind rather than per row (names may be long).
    std::vector<GroupMember*> member_of_kind(d.collectives.size(), nullptr);
    for (size_t r = 0; r < d.collective_timings.size(); ++r) {
      const CollectiveTiming& row = d.collective_timings[r];
      if (row.kind < 0 || static_cast<size_t>(row.kind) >= d.collectives.size()) continue;
      GroupMember*& member = member_of_kind[static_cast<size_t>(row.kind)];
      if (member == nullptr) member = &mine[d.collectives[static_cast<size_t>(row.kind)].group];
      GroupMember& m = *member;
      m.participant = p;
      m.rows[row.kind].push_back(static_cast<int32_t>(r));
      ++m.row_count;
    }
    for (auto& [group, m] : mine) groups[group].push_back(std::move(m));
  }
  std::set<size_t> waited;  // participants of a group of two or more
  for (auto& [group, members] : groups) {
    if (members.size() < 2) continue;
    MatchGroup(members);
    for (const GroupMember& m : members) waited.insert(m.participant);
  }
  // Waits per kind, device and step. A device whose rows do not cover its steady state (more
  // collectives than DeviceReport::kMaxCollectiveRows) has its kinds' waits scaled to it.
  std::map<std::pair<size_t, int32_t>, int64_t> by_kind;
  for (const Wait& w : waits_) by_kind[{w.participant, w.kind}] += w.wait_ns;
  for (size_t p : waited) {
    DeviceReport& d = job_.devices[p_[p].device];
    std::vector<int64_t> listed(d.collectives.size(), 0);  // steady-state rows per kind
    for (const CollectiveTiming& row : d.collective_timings) {
      if (row.start_ns >= d.steady_start_ns && row.start_ns < d.steady_end_ns) {
        ++listed[static_cast<size_t>(row.kind)];
      }
    }
    int64_t total = 0;
    for (size_t k = 0; k < d.collectives.size(); ++k) {
      CollectiveStats& kind = d.collectives[k];
      const auto it = by_kind.find({p, static_cast<int32_t>(k)});
      int64_t wait = it == by_kind.end() ? 0 : it->second;
      if (d.collectives_not_listed > 0 && listed[k] > 0 && kind.count > listed[k]) {
        wait = static_cast<int64_t>(static_cast<double>(wait) * static_cast<double>(kind.count) /
                                    static_cast<double>(listed[k]));
      }
      kind.wait_ns = wait;
      total += wait;
    }
    d.comm_wait_ns = total;
  }
  AddStepWaits(waited);
  // Clocks.
  ClockAlignment& c = job_.clock;
  // Ranks by number (the last of a duplicate number, as the job lists them): a lookup per
  // participant rather than a pass over the ranks (issue 29's complexity budget).
  absl::flat_hash_map<int, const RankReport*> rank_by_number;
  for (const RankReport& rr : job_.ranks) rank_by_number.insert_or_assign(rr.rank, &rr);
  std::set<absl::string_view> hosts;
  for (size_t p : waited) {
    const auto r = rank_by_number.find(p_[p].rank);
    if (r != rank_by_number.end() && !r->second->host.empty()) hosts.insert(r->second->host);
  }
  if (!waited.empty()) {
    c.method = any_offset_ ? "aligned" : "one clock";
    c.hosts = static_cast<int64_t>(hosts.size());
    c.residual_ns = Median(residuals_);
    c.matched_share =
        rows_ > 0 ? static_cast<double>(rows_matched_) / static_cast<double>(rows_) : 0;
  }
  absl::flat_hash_map<int, int64_t> offset_by_rank;
  for (const Participant& p : p_) {
    if (p.aligned) offset_by_rank.insert_or_assign(p.rank, p.offset_ns);
  }
  for (RankReport& r : job_.ranks) {
    if (const auto offset = offset_by_rank.find(r.rank); offset != offset_by_rank.end()) {
      r.clock_offset_ns = offset->second;
    }
    const auto it = lateness_.find(r.rank);
    if (it == lateness_.end()) continue;
    r.matched = it->second.matched;
    r.arrived_last = it->second.arrived_last;
    r.late_ns = it->second.late_ns;
  }
}

void CollectiveMatcher::AddStepWaits(const std::set<size_t>& waited) {
  // The steps of each waiting device, by start.
  std::map<std::pair<int, int>, std::vector<size_t>> steps;  // (rank, device) -> step rows
  for (size_t s = 0; s < job_.steps.size(); ++s) {
    const StepReport& step = job_.steps[s];
    steps[{step.rank.value_or(-1), step.device}].push_back(s);
  }
  std::map<size_t, const std::vector<size_t>*> of_participant;
  for (size_t p : waited) {
    const DeviceReport& d = Device(p);
    const auto it = steps.find({d.rank.value_or(-1), d.device});
    if (it == steps.end()) continue;
    of_participant[p] = &it->second;
    for (size_t s : it->second) job_.steps[s].comm_wait_ns = 0;
  }
  for (const Wait& w : waits_) {
    const auto it = of_participant.find(w.participant);
    if (it == of_participant.end()) continue;
    const std::vector<size_t>& rows = *it->second;
    auto pos = std::upper_bound(rows.begin(), rows.end(), w.start_ns,
                                [&](int64_t v, size_t s) { return v < job_.steps[s].start_ns; });
    if (pos == rows.begin()) continue;
    StepReport& step = job_.steps[*(pos - 1)];
    if (w.start_ns < step.end_ns) *step.comm_wait_ns += w.wait_ns;
  }
}

// Report merging, apart from the collectives.

int RankNumberOf(const Report& r, size_t position) {
  if (!r.ranks.empty()) return r.ranks.front().rank;
  for (const DeviceReport& d : r.devices) {
    if (d.rank) return *d.rank;
  }
  return static_cast<int>(position);
}

// Gives every row of a one-process report its rank number.
void Label(int rank, Report* r) {
  for (DeviceReport& d : r->devices) d.rank = d.rank.value_or(rank);
  for (StepReport& s : r->steps) s.rank = s.rank.value_or(rank);
  for (GapRecord& g : r->longest_gaps) g.rank = g.rank.value_or(rank);
  for (VisibleDevice& v : r->visible_devices) v.rank = v.rank.value_or(rank);
  if (r->ranks.empty()) r->ranks.emplace_back().rank = rank;
}

// The rank's own dominant cause: of its lost time (idle and waits for peers), the subcause with
// most of it.
void SetOwnCause(const std::vector<const DeviceReport*>& devices, RankReport* rank) {
  IdleBreakdown lost;
  for (const DeviceReport* d : devices) {
    lost += d->idle;
    lost[Subcause::kCommWait] += d->comm_wait_ns.value_or(0);
  }
  const int64_t total = lost.TotalNs();
  if (total <= 0) return;
  rank->own_cause = lost.Dominant();
  rank->own_cause_share = static_cast<double>(lost[*rank->own_cause]) / static_cast<double>(total);
}

void NameStragglers(const std::vector<int64_t>& steady_spans, Report* job) {
  int64_t total_late = 0;
  for (const RankReport& r : job->ranks) total_late += r.late_ns;
  const int64_t steady = Median(steady_spans);
  std::vector<const RankReport*> late;
  for (const RankReport& r : job->ranks) {
    if (r.arrived_last > 0 &&
        static_cast<double>(r.late_ns) >=
            kStragglerMinShareOfLateness * static_cast<double>(total_late) &&
        static_cast<double>(r.late_ns) >=
            kStragglerMinShareOfSteadyState * static_cast<double>(steady)) {
      late.push_back(&r);
    }
  }
  std::stable_sort(late.begin(), late.end(), [](const RankReport* a, const RankReport* b) {
    return a->late_ns > b->late_ns;
  });
  for (const RankReport* r : late) job->stragglers.push_back(r->rank);
  if (!late.empty()) job->straggler_rank = late.front()->rank;
}

// The waits' advice names the straggler and the fix of its own cause: what made it late.
void AdviseOnTheStraggler(Report* job) {
  if (!job->straggler_rank) return;
  const RankReport* s = nullptr;
  for (const RankReport& r : job->ranks) {
    if (r.rank == *job->straggler_rank) s = &r;
  }
  if (s == nullptr || s->arrived_last == 0) return;
  for (Advice& a : job->advice) {
    if (a.subcause != Subcause::kCommWait) continue;
    std::string fix = absl::StrCat(
        "collectives waited for rank ", s->rank, ", the straggler (it arrived last at ",
        s->arrived_last, " of ", s->matched, " collectives, ",
        absl::StrFormat("%.1f ms", static_cast<double>(s->late_ns) /
                                       static_cast<double>(s->arrived_last) / 1e6),
        " late on average)");
    if (s->own_cause && *s->own_cause != Subcause::kCommWait) {
      absl::StrAppend(&fix, ": its own lost time is ",
                      static_cast<int>(std::lround(100 * s->own_cause_share)), "% ",
                      QualifiedSubcauseName(*s->own_cause), "; fix that on rank ", s->rank,
                      " first: ", FixFor(*s->own_cause));
    } else {
      absl::StrAppend(&fix,
                      ": balance work across ranks, check the interconnect (nvidia-smi "
                      "topo -m: NV# is NVLink, PIX/PHB is PCIe)");
    }
    a.fix = std::move(fix);
  }
}

// Keeps the first `per_device` step rows of each device, counting the rest as not listed.
void KeepFirstSteps(size_t per_device, Report* report) {
  std::map<std::pair<int, int>, size_t> listed;
  std::erase_if(report->steps, [&](const StepReport& s) {
    if (listed[{s.rank.value_or(-1), s.device}]++ < per_device) return false;
    ++report->steps_not_listed;
    return true;
  });
}

// Unused devices: a device of a host is unused when no rank of the host ran work on it (ranks
// of unknown hosts are taken as one host, as their devices are numbered alike).
void ListDevices(const std::vector<Report>& ranks, Report* job) {
  std::set<int> visible, used;
  // Hosts by number, in the order of their names: a name is compared once per report, not once
  // per device (names may be long).
  const auto host_of = [](const Report& r) {
    return r.ranks.empty() ? absl::string_view() : absl::string_view(r.ranks.front().host);
  };
  std::map<absl::string_view, int> host_numbers;
  for (const Report& r : ranks) host_numbers.try_emplace(host_of(r), 0);
  int next = 0;
  for (auto& [name, number] : host_numbers) number = next++;
  std::map<std::pair<int, int>, VisibleDevice> listed;
  std::set<std::pair<int, int>> used_on_host;
  for (const Report& r : ranks) {
    const int host = host_numbers.at(host_of(r));
    for (const DeviceReport& d : r.devices) {
      used.insert(d.device);
      used_on_host.insert({host, d.device});
    }
    if (r.visible_device_count > 0) {
      for (const DeviceReport& d : r.devices) visible.insert(d.device);
      visible.insert(r.unused_devices.begin(), r.unused_devices.end());
    }
    for (const VisibleDevice& v : r.visible_devices) listed.try_emplace({host, v.device}, v);
  }
  if (!visible.empty()) visible.insert(used.begin(), used.end());
  job->visible_device_count = static_cast<int>(visible.size());
  job->unused_devices.clear();
  for (int v : visible) {
    if (!used.contains(v)) job->unused_devices.push_back(v);
  }
  for (auto& [key, v] : listed) {
    v.used = used_on_host.contains(key);
    job->visible_devices.push_back(std::move(v));
  }
}

// Whether the job's report adds up what its inputs do within kMaxReportSum, as the report reader
// requires of each input: the devices' windows (which bound every other time of theirs), their
// counts, the offenders' idle times.
bool SumsFit(const std::vector<Report>& ranks) {
  int64_t windows_ns = 0, counts = 0, offenders_ns = 0;
  const auto add = [](int64_t* sum, int64_t value) {
    return !__builtin_add_overflow(*sum, value, sum) && *sum <= kMaxReportSum;
  };
  for (const Report& r : ranks) {
    for (const DeviceReport& d : r.devices) {
      if (!add(&windows_ns, d.window_ns)) return false;
      for (int64_t count : {d.step_count, d.kernel_count, d.memcpy_count, d.memset_count}) {
        if (!add(&counts, count)) return false;
      }
      for (const CollectiveStats& k : d.collectives) {
        if (!add(&counts, k.count)) return false;
      }
    }
    for (const Offender& o : r.offenders) {
      if (!add(&offenders_ns, o.idle_ns)) return false;
    }
  }
  return true;
}

}  // namespace

void KeepStepRowsForMerge(size_t inputs, Report* report) {
  KeepFirstSteps(StepRowsPerDevice(inputs), report);
}

absl::StatusOr<Report> MergeRanks(std::vector<Report> ranks, const std::vector<std::string>& names,
                                  const AnalysisOptions& options) {
  if (ranks.empty()) return absl::InvalidArgumentError("nothing to merge");
  if (ranks.size() == 1) return std::move(ranks.front());
  Report job;
  job.options = options;
  std::vector<JobMember> members;
  std::vector<int64_t> steady_spans;
  LongestGaps longest(options.max_gap_records);
  std::vector<Offender> offenders;
  int64_t serving_span_ns = 0;
  bool first = true;
  if (!SumsFit(ranks)) {
    return absl::InvalidArgumentError(
        "the inputs' devices' windows, idle times or counts add up to 2^62 or more: no job's "
        "reports do");
  }
  for (size_t i = 0; i < ranks.size(); ++i) {
    Report& r = ranks[i];
    if (r.ranks.size() > 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          i < names.size() ? names[i] : absl::StrCat("input ", i + 1), " is the merged report of ",
          r.ranks.size(), " ranks: merge the ranks' own reports (or traces)"));
    }
    Label(RankNumberOf(r, i), &r);
    const RankReport& rank = r.ranks.front();
    const bool active = !r.devices.empty() || r.window_end_ns > r.window_start_ns;
    members.push_back(JobMember{rank.rank, rank.world_size,
                                active ? std::optional(r.window_start_ns) : std::nullopt,
                                active ? std::optional(r.window_end_ns) : std::nullopt});
    steady_spans.push_back(SteadySpan(r));
    if (job.source.empty()) job.source = r.source;
    job.inputs.insert(job.inputs.end(), r.inputs.begin(), r.inputs.end());
    job.window_start_ns =
        first ? r.window_start_ns : std::min(job.window_start_ns, r.window_start_ns);
    job.window_end_ns = first ? r.window_end_ns : std::max(job.window_end_ns, r.window_end_ns);
    first = false;
    for (const std::string& w : r.warnings) {
      job.warnings.push_back(absl::StrCat("input ", i + 1, ": ", w));
    }
    if (r.dropped_records) {
      job.dropped_records = job.dropped_records.value_or(0) + *r.dropped_records;
    }
    job.zero_timestamp_records += r.zero_timestamp_records;
    job.record_limit_reached |= r.record_limit_reached;
    if (job.step_source.empty()) job.step_source = r.step_source;
    if (job.tracer_time == report_values::kNotKnown) job.tracer_time = r.tracer_time;
    if (r.device_times == report_values::kMadeUp) job.device_times = r.device_times;
    if (r.coverage) {
      Coverage& c = job.coverage.emplace(job.coverage.value_or(Coverage{}));
      c.windows += r.coverage->windows;
      c.traced_ns += r.coverage->traced_ns;
      c.span_ns = std::max(c.span_ns, r.coverage->span_ns);
    }
    if (r.serving.has_value()) {  // servers side by side: their rates add
      if (!job.serving.has_value()) job.serving.emplace();
      AddServing(*r.serving, steady_spans.back(), /*concurrent=*/true, &*job.serving,
                 &serving_span_ns);
    }
    job.steps_not_listed += r.steps_not_listed;
    for (DeviceReport& d : r.devices) job.devices.push_back(std::move(d));
    for (StepReport& s : r.steps) job.steps.push_back(std::move(s));
    for (GapRecord& g : r.longest_gaps) {
      if (longest.WouldKeep(g.end_ns - g.start_ns)) longest.Offer(std::move(g));
    }
    offenders.insert(offenders.end(), r.offenders.begin(), r.offenders.end());
    MergePeriodicWork(r.periodic_work, &job.periodic_work);
    job.ranks.push_back(rank);
  }
  ListDevices(ranks, &job);
  KeepFirstSteps(StepRowsPerDevice(job.devices.size()), &job);
  CoarsenTimelines(&job);
  if (job.steps_not_listed > 0) {
    job.warnings.push_back(absl::StrCat(
        "the report lists ", job.steps.size(), " of ", job.steps.size() + job.steps_not_listed,
        " steps (the first of each device); the figures of each device cover every step"));
  }
  job.longest_gaps = longest.Take();
  job.offenders = MergeOffenders(std::move(offenders), options.max_offenders);

  std::vector<Participant> participants;
  absl::flat_hash_map<int, const RankReport*> rank_by_number;  // the last of a duplicate number
  for (const RankReport& r : job.ranks) rank_by_number.insert_or_assign(r.rank, &r);
  for (size_t d = 0; d < job.devices.size(); ++d) {
    const DeviceReport& dev = job.devices[d];
    if (dev.collective_timings.empty()) continue;
    const auto found = rank_by_number.find(*dev.rank);
    const RankReport* rank = found == rank_by_number.end() ? nullptr : found->second;
    Participant p{d, *dev.rank, "", std::nullopt};
    p.clock = rank && !rank->host.empty() ? rank->host : absl::StrCat("rank ", *dev.rank);
    if (rank) p.wall_clock_offset_ns = rank->wall_clock_offset_ns;
    participants.push_back(std::move(p));
  }
  const size_t untimed = static_cast<size_t>(std::count_if(
      job.devices.begin(), job.devices.end(),
      [](const DeviceReport& d) { return d.comm_ns > 0 && d.collective_timings.empty(); }));
  if (untimed > 0) {
    job.warnings.push_back(
        absl::StrCat(untimed,
                     " device(s) ran collectives but their reports list none (written by an older "
                     "gpuidle): their waits for peers are not known; merge their traces instead"));
  }
  CollectiveMatcher(&job, std::move(participants)).Run();
  // The checks see the windows on the job's clock: hosts whose clocks differ still overlap.
  for (size_t i = 0; i < members.size(); ++i) {
    const int64_t offset = job.ranks[i].clock_offset_ns;
    if (members[i].start_ns) *members[i].start_ns = Shifted(*members[i].start_ns, offset);
    if (members[i].end_ns) *members[i].end_ns = Shifted(*members[i].end_ns, offset);
  }
  std::vector<std::string> checks = CheckJob(members, names);
  job.warnings.insert(job.warnings.end(), checks.begin(), checks.end());
  absl::flat_hash_map<int, std::vector<const DeviceReport*>> devices_of_rank;
  for (const DeviceReport& d : job.devices) devices_of_rank[d.rank.value_or(-1)].push_back(&d);
  for (RankReport& r : job.ranks) {
    const std::vector<const DeviceReport*>& devices = devices_of_rank[r.rank];
    for (const DeviceReport* d : devices) {
      for (const CollectiveStats& k : d->collectives) r.collectives += k.count;
      r.wait_ns += d->comm_wait_ns.value_or(0);
    }
    SetOwnCause(devices, &r);
  }
  NameStragglers(steady_spans, &job);
  AddAdvice(options, &job);
  AdviseOnTheStraggler(&job);
  // The tables served the merge: the job's report lists none (its ranks' reports merge again,
  // and 1024 ranks' tables would make it hundreds of megabytes).
  for (DeviceReport& d : job.devices) {
    d.collectives_not_listed += static_cast<int64_t>(d.collective_timings.size());
    d.collective_timings = {};
  }
  return job;
}

}  // namespace gpuidle::internal
