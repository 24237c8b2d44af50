#include "analysis/gap_records.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace gpuidle::internal {

GapRecord ToGapRecord(const TimelineIndex& index, const HostStacks& stacks,
                      const DeviceTimeline& device, const DeviceReport& d, const IdlePiece& piece) {
  const Timeline& t = index.timeline();
  GapRecord g;
  g.rank = d.rank;
  g.device = d.device;
  g.start_ns = piece.start_ns;
  g.end_ns = piece.end_ns;
  g.subcause = piece.subcause;
  if (piece.next_op >= 0) {
    const DeviceOp& op = device.ops[piece.next_op];
    g.next_op = std::string(t.strings.Get(op.name));
    if (const int32_t launch = index.IssuingCall(device, piece.next_op); launch >= 0) {
      g.thread = t.calls[launch].thread;
    }
  }
  if (piece.range >= 0) {
    g.evidence = std::string(t.strings.Get(t.ranges[piece.range].name));
  } else if (piece.call >= 0) {
    const HostCall& c = t.calls[piece.call];
    g.evidence = std::string(t.strings.Get(c.name));
    g.call_site = index.CallSite(c.thread, c.start_ns);
    if (g.thread == 0) g.thread = c.thread;
  }
  if (piece.subcause == Subcause::kHost) {
    g.evidence = absl::StrCat("no CUDA call for ", (piece.end_ns - piece.start_ns) / 1000, " us");
  }
  if (piece.stack >= 0) {
    const StackEvidence& ev = stacks.evidence(piece.stack);
    if (piece.range < 0) {
      g.evidence =
          absl::StrCat(HostActivityName(ev.activity), " (sampled stack): no CUDA call for ",
                       (piece.end_ns - piece.start_ns) / 1000, " us");
    }
    g.call_site = ev.frame;
  }
  return g;
}

}  // namespace gpuidle::internal
