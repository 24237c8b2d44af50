#include "ingest/trace_post_process.h"

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "model/call_streams.h"

namespace gpuidle::internal::kineto {

absl::Status ShiftTimes(int64_t offset, Timeline* t) {
  bool overflow = false;
  auto shift = [&](int64_t& v) {
    overflow |= __builtin_add_overflow(v, offset, &v) || v < kMinTimeNs || v >= kMaxTimeNs;
  };
  for (DeviceTimeline& d : t->devices) {
    for (DeviceOp& op : d.ops) {
      shift(op.start_ns);
      shift(op.end_ns);
    }
  }
  for (HostCall& c : t->calls) {
    shift(c.start_ns);
    shift(c.end_ns);
  }
  for (Range& r : t->ranges) {
    shift(r.start_ns);
    shift(r.end_ns);
  }
  for (HostSample& s : t->samples) shift(s.time_ns);
  if (overflow) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"baseTimeNanoseconds\" = ", offset,
        " moves time stamps out of range (before -2^60 ns or from 2^63 - 2^60 ns on)"));
  }
  return absl::OkStatus();
}

absl::Status FinishTimeline(EventMapper& mapper, const ReaderWarnings& warnings,
                            std::optional<int64_t> base_time_ns, Timeline* t) {
  mapper.Finish();
  AppendWarnings(warnings, &t->info.warnings);
  AttachCallStreams(mapper.syncs(), t, mapper.event_records());
  // Kineto writes time stamps relative to baseTimeNanoseconds; absolute times let traces of
  // several ranks line up.
  if (base_time_ns) GPUIDLE_RETURN_IF_ERROR(ShiftTimes(*base_time_ns, t));
  t->Finalize();
  return absl::OkStatus();
}

}  // namespace gpuidle::internal::kineto
