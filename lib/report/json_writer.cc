// The JSON report, schema "gpuidle.report/2" (docs/REPORT_SCHEMA.md).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/text_safety.h"
#include "core/version.h"
#include "gpuidle/report.h"
#include "report/json_output.h"
#include "report/phases.h"
#include "report/writer.h"

namespace gpuidle::internal {
namespace {

using json_output::Json;
using json_output::Number;
using json_output::OptionalInt;
using json_output::OptionalInt64;
using json_output::OptionalNumber;
using json_output::Str;

void Breakdown(Json& w, const IdleBreakdown& idle) {
  Str(w, "idle_by_cause");
  w.StartObject();
  for (int c = 0; c < kNumCauses; ++c) {
    Str(w, CauseName(static_cast<Cause>(c)));
    w.Int64(idle.CauseNs(static_cast<Cause>(c)));
  }
  w.EndObject();
  Str(w, "idle_by_subcause");
  w.StartObject();
  for (int s = 0; s < kNumSubcauses; ++s) {
    Str(w, QualifiedSubcauseName(static_cast<Subcause>(s)));
    w.Int64(idle.ns[s]);
  }
  w.EndObject();
}

void CauseFields(Json& w, Subcause s) {
  Str(w, "cause");
  Str(w, CauseName(CauseOf(s)));
  Str(w, "subcause");
  Str(w, QualifiedSubcauseName(s));
}

void Parts(Json& w, const DeviceReport& d, Phase p) {
  Str(w, "parts");
  w.StartArray();
  for (const OneOffTime* o : PartsOf(d, p)) {
    w.StartObject();
    Str(w, "kind");
    Str(w, OneOffKindName(o->kind));
    Str(w, "ns");
    w.Int64(o->ns);
    Str(w, "count");
    w.Int64(o->count);
    Str(w, "evidence");
    Str(w, o->evidence);
    w.EndObject();
  }
  w.EndArray();
}

// A phase's span and its time (its length; in a report aggregated over windows, the sum over
// the windows).
void PhaseSpan(Json& w, const DeviceReport& d, Phase p, int64_t start_ns, int64_t end_ns) {
  Str(w, "start_ns");
  w.Int64(start_ns);
  Str(w, "end_ns");
  w.Int64(end_ns);
  Str(w, "ns");
  w.Int64(d.PhaseNs(p));
}

// start_up [window start, steady start), steady [steady start, steady end), wind_down [steady
// end, window end): each with its span and its one-off parts.
void Phases(Json& w, const DeviceReport& d) {
  Str(w, "phases");
  w.StartObject();
  Str(w, PhaseName(Phase::kStartUp));
  w.StartObject();
  PhaseSpan(w, d, Phase::kStartUp, d.window_start_ns, d.steady_start_ns);
  Parts(w, d, Phase::kStartUp);
  w.EndObject();
  Str(w, PhaseName(Phase::kSteady));
  w.StartObject();
  PhaseSpan(w, d, Phase::kSteady, d.steady_start_ns, d.steady_end_ns);
  Str(w, "one_off_ns");
  w.Int64(d.SteadyOneOffNs());
  Parts(w, d, Phase::kSteady);
  w.EndObject();
  Str(w, PhaseName(Phase::kWindDown));
  w.StartObject();
  PhaseSpan(w, d, Phase::kWindDown, d.steady_end_ns, d.window_end_ns);
  Parts(w, d, Phase::kWindDown);
  w.EndObject();
  w.EndObject();
}

// The longest start-up (wind-down) over the devices, for the headline; null without devices.
void LongestPhaseSummary(Json& w, const Report& r, Phase p) {
  Str(w, PhaseName(p));
  const DeviceReport* d = LongestPhase(r, p);
  if (d == nullptr) {
    w.Null();
    return;
  }
  w.StartObject();
  Str(w, "rank");
  OptionalInt(w, d->rank);
  Str(w, "device");
  w.Int(d->device);
  Str(w, "ns");
  w.Int64(d->PhaseNs(p));
  Parts(w, *d, p);
  w.EndObject();
}

// An object of integer fields under `key`.
void Int64Fields(Json& w, const char* key,
                 std::initializer_list<std::pair<const char*, int64_t>> fields) {
  Str(w, key);
  w.StartObject();
  for (const auto& [name, value] : fields) {
    Str(w, name);
    w.Int64(value);
  }
  w.EndObject();
}

void CopyTotalsField(Json& w, const char* key, const CopyTotals& c) {
  Int64Fields(w, key, {{"count", c.count}, {"bytes", c.bytes}, {"ns", c.ns}});
}

void GraphReplaysField(Json& w, const GraphReplays& g) {
  Int64Fields(
      w, "graph_replays",
      {{"launches", g.launches}, {"kernels", g.kernels}, {"kernels_alone", g.kernels_alone}});
}

// One kind of collective of a device; bytes and wait_ns only where known.
void Collectives(Json& w, const DeviceReport& d) {
  Str(w, "collectives");
  w.StartArray();
  for (const CollectiveStats& c : d.collectives) {
    w.StartObject();
    Str(w, "group");
    Str(w, c.group);
    Str(w, "op");
    Str(w, c.op);
    Str(w, "count");
    w.Int64(c.count);
    Str(w, "ns");
    w.Int64(c.ns);
    Str(w, "exposed_ns");
    w.Int64(c.exposed_ns);
    if (c.bytes) {
      Str(w, "bytes");
      w.Int64(*c.bytes);
    }
    if (c.wait_ns) {
      Str(w, "wait_ns");
      w.Int64(*c.wait_ns);
    }
    w.EndObject();
  }
  w.EndArray();
}

// The per-collective timing table, compact (docs/REPORT_SCHEMA.md, "collective_timings"): one
// array per column, each on one line, so that 4096 rows take a few hundred KB, not 4096 objects.
void CollectiveTimings(Json& w, const DeviceReport& d) {
  Str(w, "collectives_not_listed");
  w.Int64(d.collectives_not_listed);
  Str(w, "collective_timings");
  w.StartObject();
  const auto column = [&](absl::string_view name, auto value) {
    Str(w, name);
    w.SetFormatOptions(rapidjson::kFormatSingleLineArray);
    w.StartArray();
    for (const CollectiveTiming& t : d.collective_timings) w.Int64(value(t));
    w.EndArray();
    w.SetFormatOptions(rapidjson::kFormatDefault);
  };
  column("start_ns", [](const CollectiveTiming& t) { return t.start_ns; });
  column("duration_ns", [](const CollectiveTiming& t) { return t.end_ns - t.start_ns; });
  column("seq", [](const CollectiveTiming& t) { return t.seq; });
  column("bytes", [](const CollectiveTiming& t) { return t.bytes; });
  column("kind", [](const CollectiveTiming& t) { return int64_t{t.kind}; });
  w.EndObject();
}

// The binned timeline (docs/REPORT_SCHEMA.md, "timeline"), one array per column on one line;
// absent when the report has none (read from an older gpuidle's report).
void Timeline(Json& w, const TimelineSummary& t) {
  if (t.bin_ns <= 0) return;
  Str(w, "timeline");
  w.StartObject();
  Str(w, "start_ns");
  w.Int64(t.start_ns);
  Str(w, "bin_ns");
  w.Int64(t.bin_ns);
  const auto column = [&](absl::string_view name, auto value) {
    Str(w, name);
    w.SetFormatOptions(rapidjson::kFormatSingleLineArray);
    w.StartArray();
    for (const TimelineSummary::Bin& b : t.bins) w.Int64(value(b));
    w.EndArray();
    w.SetFormatOptions(rapidjson::kFormatDefault);
  };
  column("busy_ns", [](const TimelineSummary::Bin& b) { return b.busy_ns; });
  Str(w, "idle_ns");
  w.StartObject();
  for (int c = 0; c < kNumCauses; ++c) {
    column(CauseName(static_cast<Cause>(c)),
           [c](const TimelineSummary::Bin& b) { return b.idle_ns[static_cast<size_t>(c)]; });
  }
  w.EndObject();
  column("one_off_ns", [](const TimelineSummary::Bin& b) { return b.one_off_ns; });
  w.EndObject();
}

void VisibleDevices(Json& w, const Report& r) {
  if (r.visible_devices.empty()) return;
  Str(w, "visible_devices");
  w.StartArray();
  for (const VisibleDevice& v : r.visible_devices) {
    w.StartObject();
    Str(w, "rank");
    OptionalInt(w, v.rank);
    Str(w, "device");
    w.Int(v.device);
    Str(w, "physical_index");
    OptionalInt(w, v.physical_index);
    Str(w, "uuid");
    Str(w, v.uuid);
    Str(w, "name");
    Str(w, v.name);
    Str(w, "used");
    w.Bool(v.used);
    w.EndObject();
  }
  w.EndArray();
}

// The ranks (when known), the straggler (always: a rank or null) and the clock alignment (after a
// merge of ranks).
void Ranks(Json& w, const Report& r) {
  if (!r.ranks.empty()) {
    Str(w, "ranks");
    w.StartArray();
    for (const RankReport& k : r.ranks) {
      w.StartObject();
      Str(w, "rank");
      w.Int(k.rank);
      Str(w, "host");
      Str(w, k.host);
      Str(w, "pid");
      OptionalInt64(w, k.pid);
      Str(w, "world_size");
      OptionalInt(w, k.world_size);
      Str(w, "wall_clock_offset_ns");
      OptionalInt64(w, k.wall_clock_offset_ns);
      Str(w, "clock_offset_ns");
      w.Int64(k.clock_offset_ns);
      Str(w, "collectives");
      w.Int64(k.collectives);
      Str(w, "matched");
      w.Int64(k.matched);
      Str(w, "arrived_last");
      w.Int64(k.arrived_last);
      Str(w, "late_ns");
      w.Int64(k.late_ns);
      Str(w, "wait_ns");
      w.Int64(k.wait_ns);
      Str(w, "own_cause");
      if (k.own_cause) {
        Str(w, QualifiedSubcauseName(*k.own_cause));
      } else {
        w.Null();
      }
      Str(w, "own_cause_share");
      Number(w, k.own_cause_share);
      w.EndObject();
    }
    w.EndArray();
  }
  Str(w, "straggler_rank");
  OptionalInt(w, r.straggler_rank);
  Str(w, "stragglers");
  w.StartArray();
  for (int s : r.stragglers) w.Int(s);
  w.EndArray();
  if (!r.clock.method.empty()) {
    Str(w, "clock");
    w.StartObject();
    Str(w, "method");
    Str(w, r.clock.method);
    Str(w, "hosts");
    w.Int64(r.clock.hosts);
    Str(w, "residual_ns");
    w.Int64(r.clock.residual_ns);
    Str(w, "matched_share");
    Number(w, r.clock.matched_share);
    w.EndObject();
  }
}

class JsonWriter : public ReportWriter {
 public:
  std::string Write(const Report& r) const override {
    const AnalysisOptions& options = r.options;
    rapidjson::StringBuffer buffer;
    Json w(buffer);
    w.SetIndent(' ', 1);
    w.StartObject();
    Str(w, "schema");
    Str(w, "gpuidle.report/2");
    Str(w, "generator");
    Str(w, absl::StrCat("gpuidle ", kVersion));
    Str(w, "source");
    Str(w, r.source);
    Str(w, "inputs");
    w.StartArray();
    for (const std::string& in : r.inputs) Str(w, in);
    w.EndArray();
    Str(w, "window");
    w.StartObject();
    Str(w, "start_ns");
    w.Int64(r.window_start_ns);
    Str(w, "end_ns");
    w.Int64(r.window_end_ns);
    w.EndObject();

    Str(w, "completeness");
    w.StartObject();
    Str(w, "status");
    const bool lost_spans =
        std::any_of(r.devices.begin(), r.devices.end(), [](const DeviceReport& d) {
          return std::any_of(d.one_off.begin(), d.one_off.end(), [](const OneOffTime& o) {
            return o.kind == OneOffKind::kRecordsLost && o.ns > 0;
          });
        });
    Str(w, lost_spans || r.dropped_records.value_or(0) > 0 ? "records_lost"
           : !r.dropped_records                            ? "unknown"
                                                           : "complete");
    Str(w, "dropped_records");
    if (r.dropped_records) {
      w.Uint64(*r.dropped_records);
    } else {
      w.Null();
    }
    Str(w, "zero_timestamp_records");
    w.Uint64(r.zero_timestamp_records);
    Str(w, "record_limit_reached");
    w.Bool(r.record_limit_reached);
    w.EndObject();

    if (r.coverage.has_value()) {  // a sampled collection only
      Str(w, "coverage");
      w.StartObject();
      Str(w, "windows");
      w.Int64(r.coverage->windows);
      Str(w, "traced_ns");
      w.Int64(r.coverage->traced_ns);
      Str(w, "span_ns");
      w.Int64(r.coverage->span_ns);
      Str(w, "traced_until_ns");
      w.Int64(r.coverage->traced_until_ns);
      Str(w, "first_window_ns");
      w.Int64(r.coverage->first_window_ns);
      Str(w, "window_ns");
      w.Int64(r.coverage->window_ns);
      Str(w, "period_ns");
      w.Int64(r.coverage->period_ns);
      w.EndObject();
    }
    Str(w, "visible_device_count");
    w.Int(r.visible_device_count);
    Str(w, "unused_devices");
    w.StartArray();
    for (int d : r.unused_devices) w.Int(d);
    w.EndArray();
    VisibleDevices(w, r);
    Str(w, "step_source");
    Str(w, r.step_source);
    Str(w, "tracer_time");
    Str(w, r.tracer_time);
    Str(w, "warnings");
    w.StartArray();
    for (const std::string& warning : r.warnings) Str(w, warning);
    w.EndArray();
    Ranks(w, r);
    LongestPhaseSummary(w, r, Phase::kStartUp);
    LongestPhaseSummary(w, r, Phase::kWindDown);

    Str(w, "devices");
    w.StartArray();
    for (const DeviceReport& d : r.devices) {
      w.StartObject();
      Str(w, "rank");
      OptionalInt(w, d.rank);
      Str(w, "device");
      w.Int(d.device);
      Str(w, "name");
      Str(w, d.name);
      Str(w, "window_ns");
      w.Int64(d.window_ns);
      Str(w, "steady_start_ns");
      w.Int64(d.steady_start_ns);
      Str(w, "steady_end_ns");
      w.Int64(d.steady_end_ns);
      Str(w, "busy_ns");
      w.Int64(d.busy_ns);
      Str(w, "idle_ns");
      w.Int64(d.idle_ns);
      Breakdown(w, d.idle);
      Phases(w, d);
      Str(w, "step_count");
      w.Int64(d.step_count);
      Str(w, "tracer_ns");
      w.Int64(d.tracer_ns);
      Str(w, "kernel_count");
      w.Int64(d.kernel_count);
      Str(w, "memcpy_count");
      w.Int64(d.memcpy_count);
      Str(w, "memset_count");
      w.Int64(d.memset_count);
      Str(w, "comm_ns");
      w.Int64(d.comm_ns);
      Str(w, "exposed_comm_ns");
      w.Int64(d.exposed_comm_ns);
      Str(w, "comm_wait_ns");
      if (d.comm_wait_ns) {
        w.Int64(*d.comm_wait_ns);
      } else {
        w.Null();
      }
      Str(w, "lost_ns");
      w.Int64(d.LostNs());
      Str(w, "h2d_copies");
      w.StartObject();
      CopyTotalsField(w, "pageable", d.h2d_pageable);
      CopyTotalsField(w, "pinned", d.h2d_pinned);
      w.EndObject();
      GraphReplaysField(w, d.graph_replays);
      Collectives(w, d);
      CollectiveTimings(w, d);
      Timeline(w, d.timeline);
      w.EndObject();
    }
    w.EndArray();

    Str(w, "steps_not_listed");
    w.Uint64(r.steps_not_listed);
    Str(w, "steps");
    w.StartArray();
    for (const StepReport& s : r.steps) {
      w.StartObject();
      Str(w, "rank");
      OptionalInt(w, s.rank);
      Str(w, "device");
      w.Int(s.device);
      Str(w, "name");
      Str(w, s.name);
      Str(w, "start_ns");
      w.Int64(s.start_ns);
      Str(w, "end_ns");
      w.Int64(s.end_ns);
      Str(w, "busy_ns");
      w.Int64(s.busy_ns);
      Str(w, "idle_ns");
      w.Int64(s.idle.TotalNs());
      Breakdown(w, s.idle);
      Str(w, "one_off_ns");
      w.Int64(s.one_off_ns);
      if (s.comm_wait_ns) {
        Str(w, "comm_wait_ns");
        w.Int64(*s.comm_wait_ns);
      }
      w.EndObject();
    }
    w.EndArray();

    Str(w, "longest_gaps");
    w.StartArray();
    for (const GapRecord& g : r.longest_gaps) {
      w.StartObject();
      Str(w, "rank");
      OptionalInt(w, g.rank);
      Str(w, "device");
      w.Int(g.device);
      Str(w, "start_ns");
      w.Int64(g.start_ns);
      Str(w, "end_ns");
      w.Int64(g.end_ns);
      CauseFields(w, g.subcause);
      Str(w, "next_op");
      Str(w, g.next_op);
      Str(w, "thread");
      w.Uint64(g.thread);
      Str(w, "evidence");
      Str(w, g.evidence);
      Str(w, "call_site");
      Str(w, g.call_site);
      w.EndObject();
    }
    w.EndArray();

    Str(w, "offenders");
    w.StartArray();
    for (const Offender& o : r.offenders) {
      w.StartObject();
      CauseFields(w, o.subcause);
      Str(w, "what");
      Str(w, o.what);
      Str(w, "site");
      Str(w, o.site);
      Str(w, "idle_ns");
      w.Int64(o.idle_ns);
      Str(w, "count");
      w.Int64(o.count);
      w.EndObject();
    }
    w.EndArray();

    Str(w, "periodic_work");
    w.StartArray();
    for (const PeriodicWork& p : r.periodic_work) {
      w.StartObject();
      Str(w, "activity");
      Str(w, p.activity);
      Str(w, "site");
      Str(w, p.site);
      Str(w, "occurrences");
      w.Int64(p.occurrences);
      Str(w, "span_ns");
      w.Int64(p.span_ns);
      Str(w, "idle_ns");
      w.Int64(p.idle_ns);
      Breakdown(w, p.idle);
      Str(w, "fix");
      Str(w, p.fix);
      w.EndObject();
    }
    w.EndArray();

    Str(w, "advice");
    w.StartArray();
    for (const Advice& a : r.advice) {
      w.StartObject();
      CauseFields(w, a.subcause);
      Str(w, "share_of_lost_time");
      Number(w, a.share_of_lost_time);
      Str(w, "fix");
      Str(w, a.fix);
      Str(w, "gain_ns");
      w.Int64(a.gain_ns);
      Str(w, "gain_per_step_ns");
      OptionalInt64(w, a.gain_per_step_ns);
      Str(w, "gain_share_of_step");
      OptionalNumber(w, a.gain_share_of_step);
      Str(w, "evidence");
      Str(w, a.evidence);
      w.EndObject();
    }
    w.EndArray();

    Str(w, "options");
    w.StartObject();
    Str(w, "launch_gap_max_ns");
    w.Int64(options.launch_gap_max_ns);
    Str(w, "dispatch_latency_max_ns");
    w.Int64(options.dispatch_latency_max_ns);
    Str(w, "data_range_patterns");
    w.StartArray();
    for (const std::string& p : options.data_range_patterns) Str(w, p);
    w.EndArray();
    if (options.skip_steps > 0) {  // only then: reports without warm-up stay as they were
      Str(w, "skip_steps");
      w.Int(options.skip_steps);
    }
    w.EndObject();
    w.EndObject();
    std::string out(buffer.GetString(), buffer.GetSize());
    out.push_back('\n');
    return out;
  }
};

}  // namespace

std::unique_ptr<ReportWriter> MakeJsonWriter() { return std::make_unique<JsonWriter>(); }

}  // namespace gpuidle::internal
