// The JSON report (docs/REPORT_SCHEMA.md). Its schema and keys are model/report_names.h's, which
// the report reader reads back.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "gpuidle/report.h"
#include "model/report_names.h"
#include "report/json_fields.h"
#include "report/json_output.h"
#include "report/phases.h"
#include "report/writer.h"

namespace gpuidle::internal {
namespace {

namespace keys = report_keys;
using json_fields::BoolField;
using json_fields::CauseFields;
using json_fields::DeviceFields;
using json_fields::Int64Field;
using json_fields::IntsField;
using json_fields::NumberField;
using json_fields::OptionalInt64Field;
using json_fields::OptionalIntField;
using json_fields::OptionalNumberField;
using json_fields::OptionalSubcauseField;
using json_fields::StringField;
using json_fields::StringsField;
using json_fields::Uint64Field;
using json_output::Json;
using json_output::Str;

void Breakdown(Json& w, const IdleBreakdown& idle) {
  Str(w, keys::kIdleByCause);
  w.StartObject();
  for (int c = 0; c < kNumCauses; ++c) {
    Int64Field(w, CauseName(static_cast<Cause>(c)), idle.CauseNs(static_cast<Cause>(c)));
  }
  w.EndObject();
  Str(w, keys::kIdleBySubcause);
  w.StartObject();
  for (int s = 0; s < kNumSubcauses; ++s) {
    Int64Field(w, QualifiedSubcauseName(static_cast<Subcause>(s)), idle.ns[s]);
  }
  w.EndObject();
}

void Parts(Json& w, const DeviceReport& d, Phase p) {
  Str(w, keys::kParts);
  w.StartArray();
  for (const OneOffTime* o : PartsOf(d, p)) {
    w.StartObject();
    StringField(w, keys::kKind, OneOffKindName(o->kind));
    Int64Field(w, keys::kNs, o->ns);
    Int64Field(w, keys::kCount, o->count);
    StringField(w, keys::kEvidence, o->evidence);
    w.EndObject();
  }
  w.EndArray();
}

// A phase's span and its time (its length; in a report aggregated over windows, the sum over
// the windows).
void PhaseSpan(Json& w, const DeviceReport& d, Phase p, int64_t start_ns, int64_t end_ns) {
  Int64Field(w, keys::kStartNs, start_ns);
  Int64Field(w, keys::kEndNs, end_ns);
  Int64Field(w, keys::kNs, d.PhaseNs(p));
}

// start_up [window start, steady start), steady [steady start, steady end), wind_down [steady
// end, window end): each with its span and its one-off parts.
void Phases(Json& w, const DeviceReport& d) {
  Str(w, keys::kPhases);
  w.StartObject();
  Str(w, PhaseName(Phase::kStartUp));
  w.StartObject();
  PhaseSpan(w, d, Phase::kStartUp, d.window_start_ns, d.steady_start_ns);
  Parts(w, d, Phase::kStartUp);
  w.EndObject();
  Str(w, PhaseName(Phase::kSteady));
  w.StartObject();
  PhaseSpan(w, d, Phase::kSteady, d.steady_start_ns, d.steady_end_ns);
  Int64Field(w, keys::kOneOffNs, d.SteadyOneOffNs());
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
  DeviceFields(w, d->rank, d->device);
  Int64Field(w, keys::kNs, d->PhaseNs(p));
  Parts(w, *d, p);
  w.EndObject();
}

// An object of integer fields under `key`.
void Int64Fields(Json& w, absl::string_view key,
                 std::initializer_list<std::pair<absl::string_view, int64_t>> fields) {
  Str(w, key);
  w.StartObject();
  for (const auto& [name, value] : fields) Int64Field(w, name, value);
  w.EndObject();
}

void CopyTotalsField(Json& w, absl::string_view key, const CopyTotals& c) {
  Int64Fields(w, key, {{keys::kCount, c.count}, {keys::kBytes, c.bytes}, {keys::kNs, c.ns}});
}

void GraphReplaysField(Json& w, const GraphReplays& g) {
  Int64Fields(w, keys::kGraphReplays,
              {{keys::kLaunches, g.launches},
               {keys::kKernels, g.kernels},
               {keys::kKernelsAlone, g.kernels_alone}});
}

// One kind of collective of a device; bytes and wait_ns only where known.
void Collectives(Json& w, const DeviceReport& d) {
  Str(w, keys::kCollectives);
  w.StartArray();
  for (const CollectiveStats& c : d.collectives) {
    w.StartObject();
    StringField(w, keys::kGroup, c.group);
    StringField(w, keys::kOp, c.op);
    Int64Field(w, keys::kCount, c.count);
    Int64Field(w, keys::kNs, c.ns);
    Int64Field(w, keys::kExposedNs, c.exposed_ns);
    if (c.bytes) Int64Field(w, keys::kBytes, *c.bytes);
    if (c.wait_ns) Int64Field(w, keys::kWaitNs, *c.wait_ns);
    w.EndObject();
  }
  w.EndArray();
}

// A column of integers under `key`, on one line: the compact tables below take a few hundred KB
// for thousands of rows, where one object per row would take megabytes.
template <typename Row, typename Value>
void Column(Json& w, absl::string_view key, const std::vector<Row>& rows, Value value) {
  Str(w, key);
  w.SetFormatOptions(rapidjson::kFormatSingleLineArray);
  w.StartArray();
  for (const Row& row : rows) w.Int64(value(row));
  w.EndArray();
  w.SetFormatOptions(rapidjson::kFormatDefault);
}

// The per-collective timing table (docs/REPORT_SCHEMA.md, "collective_timings"), one array per
// column.
void CollectiveTimings(Json& w, const DeviceReport& d) {
  Int64Field(w, keys::kCollectivesNotListed, d.collectives_not_listed);
  Str(w, keys::kCollectiveTimings);
  w.StartObject();
  const std::vector<CollectiveTiming>& rows = d.collective_timings;
  Column(w, keys::kStartNs, rows, [](const CollectiveTiming& t) { return t.start_ns; });
  Column(w, keys::kDurationNs, rows,
         [](const CollectiveTiming& t) { return t.end_ns - t.start_ns; });
  Column(w, keys::kSeq, rows, [](const CollectiveTiming& t) { return t.seq; });
  Column(w, keys::kBytes, rows, [](const CollectiveTiming& t) { return t.bytes; });
  Column(w, keys::kKind, rows, [](const CollectiveTiming& t) { return int64_t{t.kind}; });
  w.EndObject();
}

// A column of percentages, to a tenth (the readings are no finer); -1 where not measured.
template <typename Row, typename Value>
void PctColumn(Json& w, absl::string_view key, const std::vector<Row>& rows, Value value) {
  Str(w, key);
  w.SetFormatOptions(rapidjson::kFormatSingleLineArray);
  w.StartArray();
  for (const Row& row : rows) {
    const double v = value(row);
    if (v < 0) {
      w.Int(-1);
    } else {
      w.Double(std::round(v * 10) / 10);
    }
  }
  w.EndArray();
  w.SetFormatOptions(rapidjson::kFormatDefault);
}

// The timeline's readings per bin (docs/REPORT_SCHEMA.md, "timeline"): absent without any; each
// column only where some bin has a figure of it, to keep the report small.
void TimelineGpu(Json& w, const TimelineSummary& t) {
  if (t.gpu.empty()) return;
  using GpuBin = TimelineSummary::GpuBin;
  const auto any = [&](auto has) { return std::any_of(t.gpu.begin(), t.gpu.end(), has); };
  Str(w, keys::kGpu);
  w.StartObject();
  Int64Field(w, keys::kSmClockMaxMhz, t.sm_clock_max_mhz);
  Int64Field(w, keys::kPowerLimitMw, t.power_limit_mw);
  if (any([](const GpuBin& b) { return b.samples > 0; })) {
    Column(w, keys::kSamples, t.gpu, [](const GpuBin& b) { return b.samples; });
    Column(w, keys::kSmClockMhz, t.gpu, [](const GpuBin& b) { return int64_t{b.sm_clock_mhz}; });
    Column(w, keys::kPowerMw, t.gpu, [](const GpuBin& b) { return int64_t{b.power_mw}; });
  }
  if (any([](const GpuBin& b) { return b.pm_ns > 0; })) {
    Column(w, keys::kPmNs, t.gpu, [](const GpuBin& b) { return b.pm_ns; });
    for (const auto& column : {std::pair{keys::kSmActivePct, &GpuBin::sm_active_pct},
                               std::pair{keys::kTensorActivePct, &GpuBin::tensor_active_pct},
                               std::pair{keys::kDramPct, &GpuBin::dram_pct}}) {
      const auto figure = column.second;  // a variable: lambdas cannot capture a binding in C++17
      if (!any([figure](const GpuBin& b) { return b.*figure >= 0; })) continue;
      PctColumn(w, column.first, t.gpu, [figure](const GpuBin& b) { return b.*figure; });
    }
  }
  w.EndObject();
}

// The binned timeline (docs/REPORT_SCHEMA.md, "timeline"), one array per column; absent when the
// report has none (read from an older gpuidle's report).
void Timeline(Json& w, const TimelineSummary& t) {
  if (t.bin_ns <= 0) return;
  using Bin = TimelineSummary::Bin;
  Str(w, keys::kTimeline);
  w.StartObject();
  Int64Field(w, keys::kStartNs, t.start_ns);
  Int64Field(w, keys::kBinNs, t.bin_ns);
  Column(w, keys::kBusyNs, t.bins, [](const Bin& b) { return b.busy_ns; });
  Str(w, keys::kIdleNs);
  w.StartObject();
  for (int c = 0; c < kNumCauses; ++c) {
    Column(w, CauseName(static_cast<Cause>(c)), t.bins,
           [c](const Bin& b) { return b.idle_ns[static_cast<size_t>(c)]; });
  }
  w.EndObject();
  Column(w, keys::kOneOffNs, t.bins, [](const Bin& b) { return b.one_off_ns; });
  // Only a serving process has requests in flight.
  if (!t.in_flight_ns.empty())
    Column(w, keys::kInFlightNs, t.in_flight_ns, [](int64_t v) { return v; });
  TimelineGpu(w, t);
  w.EndObject();
}

void VisibleDevices(Json& w, const Report& r) {
  if (r.visible_devices.empty()) return;
  Str(w, keys::kVisibleDevices);
  w.StartArray();
  for (const VisibleDevice& v : r.visible_devices) {
    w.StartObject();
    DeviceFields(w, v.rank, v.device);
    OptionalIntField(w, keys::kPhysicalIndex, v.physical_index);
    StringField(w, keys::kUuid, v.uuid);
    StringField(w, keys::kName, v.name);
    BoolField(w, keys::kUsed, v.used);
    w.EndObject();
  }
  w.EndArray();
}

void RankRow(Json& w, const RankReport& k) {
  w.StartObject();
  Int64Field(w, keys::kRank, k.rank);
  StringField(w, keys::kHost, k.host);
  OptionalInt64Field(w, keys::kPid, k.pid);
  OptionalIntField(w, keys::kWorldSize, k.world_size);
  OptionalInt64Field(w, keys::kWallClockOffsetNs, k.wall_clock_offset_ns);
  Int64Field(w, keys::kClockOffsetNs, k.clock_offset_ns);
  Int64Field(w, keys::kCollectives, k.collectives);
  Int64Field(w, keys::kMatched, k.matched);
  Int64Field(w, keys::kArrivedLast, k.arrived_last);
  Int64Field(w, keys::kLateNs, k.late_ns);
  Int64Field(w, keys::kWaitNs, k.wait_ns);
  OptionalSubcauseField(w, keys::kOwnCause, k.own_cause);
  NumberField(w, keys::kOwnCauseShare, k.own_cause_share);
  w.EndObject();
}

// The ranks (when known), the straggler (always: a rank or null) and the clock alignment (after a
// merge of ranks).
void Ranks(Json& w, const Report& r) {
  if (!r.ranks.empty()) {
    Str(w, keys::kRanks);
    w.StartArray();
    for (const RankReport& k : r.ranks) RankRow(w, k);
    w.EndArray();
  }
  OptionalIntField(w, keys::kStragglerRank, r.straggler_rank);
  IntsField(w, keys::kStragglers, r.stragglers);
  if (!r.clock.method.empty()) {
    Str(w, keys::kClock);
    w.StartObject();
    StringField(w, keys::kMethod, r.clock.method);
    Int64Field(w, keys::kHosts, r.clock.hosts);
    Int64Field(w, keys::kResidualNs, r.clock.residual_ns);
    NumberField(w, keys::kMatchedShare, r.clock.matched_share);
    w.EndObject();
  }
}

void Completeness(Json& w, const Report& r) {
  Str(w, keys::kCompleteness);
  w.StartObject();
  const bool lost_spans =
      std::any_of(r.devices.begin(), r.devices.end(), [](const DeviceReport& d) {
        return std::any_of(d.one_off.begin(), d.one_off.end(), [](const OneOffTime& o) {
          return o.kind == OneOffKind::kRecordsLost && o.ns > 0;
        });
      });
  StringField(w, keys::kStatus,
              lost_spans || r.dropped_records.value_or(0) > 0 ? report_values::kRecordsLost
              : !r.dropped_records                            ? report_values::kUnknown
                                                              : report_values::kComplete);
  Str(w, keys::kDroppedRecords);
  if (r.dropped_records) {
    w.Uint64(*r.dropped_records);
  } else {
    w.Null();
  }
  Uint64Field(w, keys::kZeroTimestampRecords, r.zero_timestamp_records);
  BoolField(w, keys::kRecordLimitReached, r.record_limit_reached);
  w.EndObject();
}

void CoverageField(Json& w, const Coverage& c) {
  Int64Fields(w, keys::kCoverage,
              {{keys::kWindows, c.windows},
               {keys::kTracedNs, c.traced_ns},
               {keys::kSpanNs, c.span_ns},
               {keys::kTracedUntilNs, c.traced_until_ns},
               {keys::kFirstWindowNs, c.first_window_ns},
               {keys::kWindowNs, c.window_ns},
               {keys::kPeriodNs, c.period_ns}});
}

void ServingField(Json& w, const Serving& s) {
  Str(w, keys::kServing);
  w.StartObject();
  Int64Field(w, keys::kRequests, s.requests);
  NumberField(w, keys::kRequestsPerS, s.requests_per_s);
  auto percentiles = [&](absl::string_view key, const Serving::Percentiles& p) {
    Int64Fields(w, key,
                {{keys::kP50Ns, p.p50_ns}, {keys::kP90Ns, p.p90_ns}, {keys::kP99Ns, p.p99_ns}});
  };
  percentiles(keys::kLatency, s.latency);
  Int64Field(w, keys::kRunKnown, s.run_known);
  percentiles(keys::kQueue, s.queue);
  percentiles(keys::kRun, s.run);
  NumberField(w, keys::kInFlightMean, s.in_flight_mean);
  Int64Field(w, keys::kInFlightMax, s.in_flight_max);
  if (s.batch_mean.has_value()) NumberField(w, keys::kBatchMean, *s.batch_mean);
  w.EndObject();
}

// A list of rows under `key`, each written by `row`.
template <typename T, typename WriteRow>
void Rows(Json& w, absl::string_view key, const std::vector<T>& rows, WriteRow row) {
  Str(w, key);
  w.StartArray();
  for (const T& t : rows) row(w, t);
  w.EndArray();
}

// NVML's readings and PM samples of the device (docs/REPORT_SCHEMA.md, "gpu_metrics"); absent
// without them.
void GpuMetricsField(Json& w, const std::optional<GpuMetrics>& metrics) {
  if (!metrics) return;
  const GpuMetrics& m = *metrics;
  Str(w, keys::kGpuMetrics);
  w.StartObject();
  Int64Field(w, keys::kSamples, m.samples);
  Int64Field(w, keys::kBusySamples, m.busy_samples);
  Int64Field(w, keys::kIdleSamples, m.idle_samples);
  Int64Field(w, keys::kPeriodNs, m.period_ns);
  Int64Field(w, keys::kSmClockMaxMhz, m.sm_clock_max_mhz);
  Int64Field(w, keys::kSmClockMedianMhz, m.sm_clock_median_mhz);
  NumberField(w, keys::kSlowClockShare, m.slow_clock_share);
  StringField(w, keys::kSlowClockReason, m.slow_clock_reason);
  Int64Field(w, keys::kPowerMedianMw, m.power_median_mw);
  Int64Field(w, keys::kPowerLimitMw, m.power_limit_mw);
  Int64Field(w, keys::kTemperatureMaxC, m.temperature_max_c);
  Int64Field(w, keys::kPcieGeneration, m.pcie_generation);
  Int64Field(w, keys::kPcieGenerationMax, m.pcie_generation_max);
  Int64Field(w, keys::kPcieWidth, m.pcie_width);
  Int64Field(w, keys::kPcieWidthMax, m.pcie_width_max);
  Int64Field(w, keys::kPcieReplays, static_cast<int64_t>(m.pcie_replays));
  Int64Field(w, keys::kMemoryUsedMaxBytes, static_cast<int64_t>(m.memory_used_max_bytes));
  Int64Field(w, keys::kMemoryTotalBytes, static_cast<int64_t>(m.memory_total_bytes));
  Rows(w, keys::kOtherProcesses, m.other_processes, [](Json& j, const GpuMetrics::OtherProcess& o) {
    j.StartObject();
    Int64Field(j, keys::kPid, o.pid);
    Int64Field(j, keys::kMemoryBytes, static_cast<int64_t>(o.memory_bytes));
    Int64Field(j, keys::kIdleSamplesBusy, o.idle_samples_busy);
    Int64Field(j, keys::kBusySamplesBusy, o.busy_samples_busy);
    j.EndObject();
  });
  Rows(w, keys::kFindings, m.findings, [](Json& j, const GpuMetrics::Finding& f) {
    j.StartObject();
    StringField(j, keys::kKind, f.kind);
    StringField(j, keys::kWhat, f.text);
    StringField(j, keys::kFix, f.fix);
    j.EndObject();
  });
  if (m.throughput) {
    const GpuMetrics::Throughput& t = *m.throughput;
    Str(w, keys::kThroughput);
    w.StartObject();
    StringField(w, keys::kSource, t.source);
    Int64Field(w, keys::kSamples, t.samples);
    Int64Field(w, keys::kBusySamples, t.busy_samples);
    Int64Field(w, keys::kPeriodNs, t.period_ns);
    NumberField(w, keys::kKernelTimeShare, t.kernel_time_share);
    // A figure not measured is left out.
    const auto figure = [&w](absl::string_view key, double v) {
      if (v >= 0) NumberField(w, key, v);
    };
    figure(keys::kSmActivePct, t.sm_active_pct);
    figure(keys::kTensorActivePct, t.tensor_active_pct);
    figure(keys::kDramPct, t.dram_pct);
    figure(keys::kPcieReadBytesPerS, t.pcie_read_bytes_per_s);
    figure(keys::kPcieWriteBytesPerS, t.pcie_write_bytes_per_s);
    figure(keys::kNvlinkReadBytesPerS, t.nvlink_read_bytes_per_s);
    figure(keys::kNvlinkWriteBytesPerS, t.nvlink_write_bytes_per_s);
    w.EndObject();
  }
  if (!m.throughput_unavailable.empty()) {
    StringField(w, keys::kThroughputUnavailable, m.throughput_unavailable);
  }
  w.EndObject();
}

void DeviceRow(Json& w, const DeviceReport& d) {
  w.StartObject();
  DeviceFields(w, d.rank, d.device);
  StringField(w, keys::kName, d.name);
  Int64Field(w, keys::kWindowNs, d.window_ns);
  Int64Field(w, keys::kSteadyStartNs, d.steady_start_ns);
  Int64Field(w, keys::kSteadyEndNs, d.steady_end_ns);
  Int64Field(w, keys::kBusyNs, d.busy_ns);
  Int64Field(w, keys::kIdleNs, d.idle_ns);
  Breakdown(w, d.idle);
  Phases(w, d);
  Int64Field(w, keys::kStepCount, d.step_count);
  Int64Field(w, keys::kTracerNs, d.tracer_ns);
  Int64Field(w, keys::kKernelCount, d.kernel_count);
  Int64Field(w, keys::kMemcpyCount, d.memcpy_count);
  Int64Field(w, keys::kMemsetCount, d.memset_count);
  Int64Field(w, keys::kCommNs, d.comm_ns);
  Int64Field(w, keys::kExposedCommNs, d.exposed_comm_ns);
  OptionalInt64Field(w, keys::kCommWaitNs, d.comm_wait_ns);
  Int64Field(w, keys::kLostNs, d.LostNs());
  if (d.demand_ns.has_value()) {  // a serving process only
    Int64Field(w, keys::kDemandNs, *d.demand_ns);
    Int64Field(w, keys::kDemandBusyNs, d.demand_busy_ns);
  }
  Str(w, keys::kH2dCopies);
  w.StartObject();
  CopyTotalsField(w, keys::kPageable, d.h2d_pageable);
  CopyTotalsField(w, keys::kPinned, d.h2d_pinned);
  w.EndObject();
  GraphReplaysField(w, d.graph_replays);
  Collectives(w, d);
  CollectiveTimings(w, d);
  Timeline(w, d.timeline);
  GpuMetricsField(w, d.gpu_metrics);
  w.EndObject();
}

// A step's readings (docs/REPORT_SCHEMA.md, "steps"): absent without any; the PM figures only
// where measured.
void StepGpu(Json& w, const std::optional<StepReport::Gpu>& gpu) {
  if (!gpu) return;
  const StepReport::Gpu& g = *gpu;
  Str(w, keys::kGpu);
  w.StartObject();
  Int64Field(w, keys::kSamples, g.samples);
  Int64Field(w, keys::kSmClockMedianMhz, g.sm_clock_median_mhz);
  Int64Field(w, keys::kSmClockMaxMhz, g.sm_clock_max_mhz);
  Int64Field(w, keys::kPowerMedianMw, g.power_median_mw);
  Int64Field(w, keys::kPowerLimitMw, g.power_limit_mw);
  NumberField(w, keys::kSlowClockShare, g.slow_clock_share);
  for (const auto& [key, value] : {std::pair{keys::kSmActivePct, g.sm_active_pct},
                                   std::pair{keys::kTensorActivePct, g.tensor_active_pct},
                                   std::pair{keys::kDramPct, g.dram_pct}}) {
    if (value >= 0) NumberField(w, key, value);
  }
  w.EndObject();
}

void StepRow(Json& w, const StepReport& s) {
  w.StartObject();
  DeviceFields(w, s.rank, s.device);
  StringField(w, keys::kName, s.name);
  Int64Field(w, keys::kStartNs, s.start_ns);
  Int64Field(w, keys::kEndNs, s.end_ns);
  Int64Field(w, keys::kBusyNs, s.busy_ns);
  Int64Field(w, keys::kIdleNs, s.idle.TotalNs());
  Breakdown(w, s.idle);
  Int64Field(w, keys::kOneOffNs, s.one_off_ns);
  if (s.comm_wait_ns) Int64Field(w, keys::kCommWaitNs, *s.comm_wait_ns);
  StepGpu(w, s.gpu);
  w.EndObject();
}

void GapRow(Json& w, const GapRecord& g) {
  w.StartObject();
  DeviceFields(w, g.rank, g.device);
  Int64Field(w, keys::kStartNs, g.start_ns);
  Int64Field(w, keys::kEndNs, g.end_ns);
  CauseFields(w, g.subcause);
  StringField(w, keys::kNextOp, g.next_op);
  Uint64Field(w, keys::kThread, g.thread);
  StringField(w, keys::kEvidence, g.evidence);
  StringField(w, keys::kCallSite, g.call_site);
  w.EndObject();
}

void OffenderRow(Json& w, const Offender& o) {
  w.StartObject();
  CauseFields(w, o.subcause);
  StringField(w, keys::kWhat, o.what);
  StringField(w, keys::kSite, o.site);
  Int64Field(w, keys::kIdleNs, o.idle_ns);
  Int64Field(w, keys::kCount, o.count);
  w.EndObject();
}

void PeriodicWorkRow(Json& w, const PeriodicWork& p) {
  w.StartObject();
  StringField(w, keys::kActivity, p.activity);
  StringField(w, keys::kSite, p.site);
  Int64Field(w, keys::kOccurrences, p.occurrences);
  Int64Field(w, keys::kSpanNs, p.span_ns);
  Int64Field(w, keys::kIdleNs, p.idle_ns);
  Breakdown(w, p.idle);
  StringField(w, keys::kFix, p.fix);
  w.EndObject();
}

void AdviceRow(Json& w, const Advice& a) {
  w.StartObject();
  CauseFields(w, a.subcause);
  NumberField(w, keys::kShareOfLostTime, a.share_of_lost_time);
  NumberField(w, keys::kShareOfSteadyState, a.share_of_steady_state);
  StringField(w, keys::kFix, a.fix);
  Int64Field(w, keys::kGainNs, a.gain_ns);
  OptionalInt64Field(w, keys::kGainPerStepNs, a.gain_per_step_ns);
  OptionalNumberField(w, keys::kGainShareOfStep, a.gain_share_of_step);
  StringField(w, keys::kEvidence, a.evidence);
  if (a.batch.has_value()) {  // serving advice with a prediction
    Int64Field(w, keys::kBatch, *a.batch);
    NumberField(w, keys::kPredictedRequestsPerS, a.predicted_requests_per_s.value_or(0));
    Int64Field(w, keys::kPredictedLatencyNs, a.predicted_latency_ns.value_or(0));
  }
  w.EndObject();
}

void VerdictField(Json& w, const Verdict& v) {
  Str(w, keys::kVerdict);
  w.StartObject();
  BoolField(w, keys::kWorthFixing, v.worth_fixing);
  Int64Field(w, keys::kLostNs, v.lost_ns);
  Int64Field(w, keys::kSteadyNs, v.steady_ns);
  NumberField(w, keys::kLostShare, v.LostShare());
  NumberField(w, keys::kThresholdShare, v.threshold_share);
  w.EndObject();
}

void OptionsField(Json& w, const AnalysisOptions& options) {
  Str(w, keys::kOptions);
  w.StartObject();
  Int64Field(w, keys::kLaunchGapMaxNs, options.launch_gap_max_ns);
  Int64Field(w, keys::kDispatchLatencyMaxNs, options.dispatch_latency_max_ns);
  StringsField(w, keys::kDataRangePatterns, options.data_range_patterns);
  // Only when set: reports without warm-up stay as they were.
  if (options.skip_steps > 0) Int64Field(w, keys::kSkipSteps, options.skip_steps);
  w.EndObject();
}

void ReportMembers(Json& w, const Report& r) {
  StringField(w, keys::kSource, r.source);
  StringsField(w, keys::kInputs, r.inputs);
  Str(w, keys::kWindow);
  w.StartObject();
  Int64Field(w, keys::kStartNs, r.window_start_ns);
  Int64Field(w, keys::kEndNs, r.window_end_ns);
  w.EndObject();
  Completeness(w, r);
  if (r.coverage.has_value()) CoverageField(w, *r.coverage);  // a sampled collection only
  if (r.serving.has_value()) ServingField(w, *r.serving);     // a serving process only
  Int64Field(w, keys::kVisibleDeviceCount, r.visible_device_count);
  IntsField(w, keys::kUnusedDevices, r.unused_devices);
  VisibleDevices(w, r);
  StringField(w, keys::kStepSource, r.step_source);
  StringField(w, keys::kTracerTime, r.tracer_time);
  StringField(w, keys::kDeviceTimes, r.device_times);
  StringsField(w, keys::kWarnings, r.warnings);
  Ranks(w, r);
  LongestPhaseSummary(w, r, Phase::kStartUp);
  LongestPhaseSummary(w, r, Phase::kWindDown);
  Rows(w, keys::kDevices, r.devices, DeviceRow);
  Uint64Field(w, keys::kStepsNotListed, r.steps_not_listed);
  Rows(w, keys::kSteps, r.steps, StepRow);
  Rows(w, keys::kLongestGaps, r.longest_gaps, GapRow);
  Rows(w, keys::kOffenders, r.offenders, OffenderRow);
  Rows(w, keys::kPeriodicWork, r.periodic_work, PeriodicWorkRow);
  if (r.verdict.has_value()) VerdictField(w, *r.verdict);
  Rows(w, keys::kAdvice, r.advice, AdviceRow);
  OptionsField(w, r.options);
}

class JsonWriter : public ReportWriter {
 public:
  std::string Write(const Report& r) const override {
    return json_fields::Document(kReportSchema, [&](Json& w) { ReportMembers(w, r); });
  }
};

}  // namespace

std::unique_ptr<ReportWriter> MakeJsonWriter() { return std::make_unique<JsonWriter>(); }

}  // namespace gpuidle::internal
