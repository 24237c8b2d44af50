#include "analysis/offenders.h"

#include <algorithm>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace gpuidle::internal {

void OffenderTable::Add(const DeviceTimeline& device, const IdlePiece& piece) {
  const Timeline& t = index_.timeline();
  StringId what = StringTable::kEmpty;
  int64_t at = 0;
  uint64_t thread = 0;
  bool with_site = false;
  switch (piece.subcause) {
    case Subcause::kDataLoader:
      if (piece.range >= 0) what = t.ranges[piece.range].name;
      break;
    case Subcause::kHostSync:
    case Subcause::kH2DCopy:
    case Subcause::kDeviceWait:
    case Subcause::kCommWait:
    case Subcause::kCopyWait:
    case Subcause::kAllocator:
      if (piece.call >= 0) {
        const HostCall& c = t.calls[piece.call];
        std::tie(what, at, thread, with_site) = std::make_tuple(c.name, c.start_ns, c.thread, true);
      }
      break;
    case Subcause::kHost:
      // The stretch's sampled stack says what it was; else the work that followed it.
      if (piece.stack >= 0) break;
      if (piece.call >= 0) {
        const HostCall& c = t.calls[piece.call];
        std::tie(at, thread, with_site) = std::make_tuple(c.start_ns, c.thread, true);
      }
      break;
    case Subcause::kLaunchOverhead:
    case Subcause::kKernelGap:
    case Subcause::kRequestsWaiting:
    case Subcause::kOtherProcess:
    case Subcause::kUnattributed:
      // The kernel that came late, and the framework op that launched it.
      if (piece.next_op >= 0) {
        const DeviceOp& op = device.ops[piece.next_op];
        what = op.name;
        if (const int32_t launch = index_.IssuingCall(device, piece.next_op); launch >= 0) {
          const HostCall& c = t.calls[launch];
          std::tie(at, thread, with_site) = std::make_tuple(c.start_ns, c.thread, true);
        }
      }
      break;
  }
  Key key{piece.subcause, what, with_site ? SiteId(thread, at) : -1, piece.stack};
  Entry& e = entries_[key];
  e.idle_ns += piece.end_ns - piece.start_ns;
  if (piece.gap != e.last_gap || &device != e.last_device) ++e.count;
  e.last_gap = piece.gap;
  e.last_device = &device;
}

std::vector<Offender> OffenderTable::Top(int n) const {
  std::vector<Offender> out;
  for (const auto& [key, e] : entries_) {
    Offender o;
    o.subcause = key.subcause;
    o.what = key.subcause == Subcause::kHost ? "host work outside CUDA"
                                             : std::string(index_.timeline().strings.Get(key.what));
    if (key.site >= 0) o.site = sites_[key.site];
    if (key.stack >= 0) {
      const StackEvidence& ev = stacks_.evidence(key.stack);
      if (key.what == StringTable::kEmpty) {
        o.what = absl::StrCat(HostActivityName(ev.activity), " (sampled stack)");
      }
      o.site = ev.frame;
    }
    o.idle_ns = e.idle_ns;
    o.count = e.count;
    out.push_back(std::move(o));
  }
  std::sort(out.begin(), out.end(), [](const Offender& a, const Offender& b) {
    return std::tie(b.idle_ns, a.what, a.site, a.subcause) <
           std::tie(a.idle_ns, b.what, b.site, b.subcause);
  });
  if (out.size() > static_cast<size_t>(n)) out.resize(n);
  return out;
}

int32_t OffenderTable::SiteId(uint64_t thread, int64_t t) {
  if (last_site_ >= 0 && thread == last_site_thread_ && t == last_site_time_) return last_site_;
  const int32_t op = index_.framework_ops().Outermost(thread, t);
  const int32_t frame = index_.python_frames().Innermost(thread, t);
  const Timeline& tl = index_.timeline();
  const std::pair<StringId, StringId> names{op >= 0 ? tl.ranges[op].name : 0,
                                            frame >= 0 ? tl.ranges[frame].name : 0};
  auto [it, inserted] = site_ids_.try_emplace(names, static_cast<int32_t>(sites_.size()));
  if (inserted) sites_.push_back(index_.CallSite(thread, t));
  last_site_thread_ = thread;
  last_site_time_ = t;
  last_site_ = it->second;
  return it->second;
}

std::vector<Offender> MergeOffenders(std::vector<Offender> offenders, int max_offenders) {
  std::stable_sort(offenders.begin(), offenders.end(),
                   [](const Offender& a, const Offender& b) { return a.idle_ns > b.idle_ns; });
  if (offenders.size() > static_cast<size_t>(max_offenders)) offenders.resize(max_offenders);
  return offenders;
}

}  // namespace gpuidle::internal
