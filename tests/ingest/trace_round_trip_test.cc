// gpuidle traces read back: FormatGpuidleTrace then ReadKinetoTrace gives the same Timeline,
// field by field, and the same report.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"
#include "analysis/analyze.h"
#include "gmock/gmock.h"
#include "gpuidle/analyze.h"
#include "gtest/gtest.h"
#include "ingest/byte_source.h"
#include "ingest/kineto_reader.h"
#include "ingest/read_trace.h"
#include "model/timeline.h"
#include "model/trace_names.h"
#include "report/trace_writer.h"
#include "testing/random_timeline.h"
#include "testing/temp_dir.h"
#include "testing/timeline_builder.h"
#include "testing/trace_with_gaps.h"

namespace gpuidle::internal {
namespace {

using ::gpuidle::testing::Gzip;
using ::gpuidle::testing::RandomTimeline;
using ::gpuidle::testing::TempDir;
using ::gpuidle::testing::TimelineBuilder;
using ::testing::HasSubstr;

template <typename T>
std::string Show(const std::optional<T>& v) {
  return v ? absl::StrCat(*v) : "nullopt";
}

// An op's collective args as text ("" for none): indices into Timeline::collectives need not
// match, what they point at must.
std::string CollectiveText(const Timeline& t, const DeviceOp& op) {
  if (op.collective == kNoCollective) return "";
  if (op.collective >= t.collectives.size()) return "(index out of range)";
  const CollectiveArgs& c = t.collectives[op.collective];
  return absl::StrCat("group ", t.strings.Get(c.group), " op ", t.strings.Get(c.op), " seq ", c.seq,
                      " bytes ", c.bytes);
}

// The first field in which two timelines differ, "" if none. Names are compared as text: the
// string ids of a timeline read back need not match. The source is not compared (a gpuidle
// trace always reads back as "gpuidle").
std::string FirstDifference(const Timeline& a, const Timeline& b) {
  const auto differ = [](absl::string_view what, const auto& x, const auto& y) {
    return absl::StrCat(what, ": ", x, " != ", y);
  };
  const TimelineInfo& ia = a.info;
  const TimelineInfo& ib = b.info;
  if (ia.rank != ib.rank) return differ("rank", Show(ia.rank), Show(ib.rank));
  if (ia.world_size != ib.world_size) {
    return differ("world_size", Show(ia.world_size), Show(ib.world_size));
  }
  if (ia.visible_devices != ib.visible_devices) return "visible_devices differ";
  if (ia.visible_device_names != ib.visible_device_names) return "visible_device_names differ";
  if (ia.visible_device_uuids != ib.visible_device_uuids) return "visible_device_uuids differ";
  if (ia.visible_device_physical != ib.visible_device_physical) {
    return "visible_device_physical differs";
  }
  if (ia.dropped_records != ib.dropped_records) {
    return differ("dropped_records", Show(ia.dropped_records), Show(ib.dropped_records));
  }
  if (ia.zero_timestamp_records != ib.zero_timestamp_records) {
    return differ("zero_timestamp_records", ia.zero_timestamp_records, ib.zero_timestamp_records);
  }
  if (ia.record_limit_reached != ib.record_limit_reached) return "record_limit_reached differs";
  if (ia.pid != ib.pid) return differ("pid", Show(ia.pid), Show(ib.pid));
  if (ia.host != ib.host) return differ("host", ia.host, ib.host);
  if (ia.wall_clock_offset_ns != ib.wall_clock_offset_ns) {
    return differ("wall_clock_offset_ns", Show(ia.wall_clock_offset_ns),
                  Show(ib.wall_clock_offset_ns));
  }

  if (a.devices.size() != b.devices.size()) {
    return differ("device count", a.devices.size(), b.devices.size());
  }
  for (size_t d = 0; d < a.devices.size(); ++d) {
    const DeviceTimeline& da = a.devices[d];
    const DeviceTimeline& db = b.devices[d];
    const std::string where = absl::StrCat("device #", d, " ");
    if (da.device != db.device) return differ(where + "id", da.device, db.device);
    if (da.name != db.name) return differ(where + "name", da.name, db.name);
    if (da.ops.size() != db.ops.size()) {
      return differ(where + "op count", da.ops.size(), db.ops.size());
    }
    for (size_t i = 0; i < da.ops.size(); ++i) {
      const DeviceOp& x = da.ops[i];
      const DeviceOp& y = db.ops[i];
      const std::string op = absl::StrCat(where, "op #", i, " ");
      if (x.start_ns != y.start_ns) return differ(op + "start_ns", x.start_ns, y.start_ns);
      if (x.end_ns != y.end_ns) return differ(op + "end_ns", x.end_ns, y.end_ns);
      if (x.correlation_id != y.correlation_id) {
        return differ(op + "correlation_id", x.correlation_id, y.correlation_id);
      }
      if (x.bytes != y.bytes) return differ(op + "bytes", x.bytes, y.bytes);
      if (a.strings.Get(x.name) != b.strings.Get(y.name)) {
        return differ(op + "name", a.strings.Get(x.name), b.strings.Get(y.name));
      }
      if (x.stream != y.stream) return differ(op + "stream", x.stream, y.stream);
      if (x.kind != y.kind) {
        return differ(op + "kind", static_cast<int>(x.kind), static_cast<int>(y.kind));
      }
      if (x.copy_kind != y.copy_kind) {
        return differ(op + "copy_kind", CopyKindName(x.copy_kind), CopyKindName(y.copy_kind));
      }
      if (x.pageable != y.pageable) return differ(op + "pageable", x.pageable, y.pageable);
      if (x.communication != y.communication) {
        return differ(op + "communication", x.communication, y.communication);
      }
      if (const std::string cx = CollectiveText(a, x), cy = CollectiveText(b, y); cx != cy) {
        return differ(op + "collective", cx, cy);
      }
    }
  }

  if (a.calls.size() != b.calls.size()) {
    return differ("call count", a.calls.size(), b.calls.size());
  }
  for (size_t i = 0; i < a.calls.size(); ++i) {
    const HostCall& x = a.calls[i];
    const HostCall& y = b.calls[i];
    const std::string call = absl::StrCat("call #", i, " ");
    if (x.start_ns != y.start_ns) return differ(call + "start_ns", x.start_ns, y.start_ns);
    if (x.end_ns != y.end_ns) return differ(call + "end_ns", x.end_ns, y.end_ns);
    if (x.correlation_id != y.correlation_id) {
      return differ(call + "correlation_id", x.correlation_id, y.correlation_id);
    }
    if (x.thread != y.thread) return differ(call + "thread", x.thread, y.thread);
    if (a.strings.Get(x.name) != b.strings.Get(y.name)) {
      return differ(call + "name", a.strings.Get(x.name), b.strings.Get(y.name));
    }
    if (x.stream != y.stream) return differ(call + "stream", x.stream, y.stream);
    if (x.peer_stream != y.peer_stream) {
      return differ(call + "peer_stream", x.peer_stream, y.peer_stream);
    }
    if (x.category != y.category) {
      return differ(call + "category", CallCategoryName(x.category), CallCategoryName(y.category));
    }
  }

  if (a.ranges.size() != b.ranges.size()) {
    return differ("range count", a.ranges.size(), b.ranges.size());
  }
  for (size_t i = 0; i < a.ranges.size(); ++i) {
    const Range& x = a.ranges[i];
    const Range& y = b.ranges[i];
    const std::string range = absl::StrCat("range #", i, " ");
    if (x.start_ns != y.start_ns) return differ(range + "start_ns", x.start_ns, y.start_ns);
    if (x.end_ns != y.end_ns) return differ(range + "end_ns", x.end_ns, y.end_ns);
    if (x.thread != y.thread) return differ(range + "thread", x.thread, y.thread);
    if (a.strings.Get(x.name) != b.strings.Get(y.name)) {
      return differ(range + "name", a.strings.Get(x.name), b.strings.Get(y.name));
    }
    if (x.kind != y.kind) {
      return differ(range + "kind", RangeKindName(x.kind), RangeKindName(y.kind));
    }
  }

  if (a.samples.size() != b.samples.size()) {
    return differ("sample count", a.samples.size(), b.samples.size());
  }
  for (size_t i = 0; i < a.samples.size(); ++i) {
    const HostSample& x = a.samples[i];
    const HostSample& y = b.samples[i];
    const std::string sample = absl::StrCat("sample #", i, " ");
    if (x.time_ns != y.time_ns) return differ(sample + "time_ns", x.time_ns, y.time_ns);
    if (x.thread != y.thread) return differ(sample + "thread", x.thread, y.thread);
    if (a.strings.Get(x.stack) != b.strings.Get(y.stack)) {
      return differ(sample + "stack", a.strings.Get(x.stack), b.strings.Get(y.stack));
    }
  }
  return "";
}

// A timeline with every op kind, copy kind, call category and range kind, and every info
// field set.
Timeline EveryKindTimeline() {
  Timeline t = TimelineBuilder()
                   .Device(0)
                   .Stream(7)
                   .Launch(4242, 10, 15)
                   .Kernel(20, 120, "void gemm<float>(int, float*)")
                   .Launch(4242, 16, 18)
                   .NcclKernel(130, 400)
                   .CopyCall(4242, 19, 25)
                   .Copy(30, 60, CopyKind::kHtoD, /*pageable=*/true)
                   .Launch(4242, 26, 27, "cudaMemsetAsync")
                   .Memset(125, 126)
                   .Device(1)
                   .Stream(13)
                   .CopyCall(4243, 30, 31)
                   .Copy(40, 50, CopyKind::kDtoH)
                   .Sync(4242, 130, 410)
                   .WaitEvent(4243, 140, 141, /*stream=*/13, /*waited_stream=*/7)
                   .OtherCall(4243, 150, 151)
                   .Step(4242, 0, 500, "ProfilerStep#3")
                   .Data(4242, 1, 9)
                   .Op(4242, 10, 30, "aten::mm")
                   .Range(4242, 11, 12, RangeKind::kPython, "train.py(42): step")
                   .Range(4243, 20, 21, RangeKind::kUser, "nvtx: forward")
                   .Range(4243, 22, 23, RangeKind::kStep, "gpuidle step 3")
                   .Range(4243, 24, 25, RangeKind::kData, "gpuidle.data")
                   .Range(4243, 26, 40, RangeKind::kRequest, "gpuidle.request:7")
                   .Range(4242, 28, 40, RangeKind::kRequestRun, "gpuidle.request_run:7")
                   .Build();
  // The other copy kinds, as CUPTI names them and with names that say nothing.
  auto add_copy = [&](int device, int64_t start, absl::string_view name, CopyKind kind,
                      bool pageable) {
    DeviceOp op;
    op.start_ns = start;
    op.end_ns = start + 5;
    op.kind = OpKind::kMemcpy;
    op.name = t.strings.Intern(name);
    op.copy_kind = kind;
    op.pageable = pageable;
    op.stream = 13;
    op.bytes = 12345678901ull;
    t.DeviceFor(device).ops.push_back(op);
  };
  add_copy(1, 60000, "Memcpy DtoD (Device -> Device)", CopyKind::kDtoD, false);
  add_copy(1, 61000, "Memcpy HtoH (Pinned -> Pinned)", CopyKind::kHtoH, false);
  add_copy(1, 62000, "Memcpy PtoP (Device -> Device)", CopyKind::kPeer, false);
  add_copy(1, 63000, "Memcpy DtoH (Device -> Pageable)", CopyKind::kDtoH, true);
  add_copy(1, 64000, "", CopyKind::kUnknown, false);
  add_copy(1, 65000, "copy", CopyKind::kPeer, true);
  t.calls.back().stream = 9;  // an "other" call that names its stream
  // A sync whose stream is known, and a launch whose category is not what its name says.
  for (HostCall& c : t.calls) {
    if (c.category == CallCategory::kSync) c.stream = 7;
  }
  HostCall odd;
  odd.start_ns = 66000;
  odd.end_ns = 66100;
  odd.thread = 18446744073709551557ull;  // a pthread_t beyond int64
  odd.name = t.strings.Intern("myLaunchWrapper");
  odd.category = CallCategory::kLaunch;
  odd.correlation_id = 999;
  t.calls.push_back(odd);

  // A framework op whose name says "step" (the reader takes step names in every category),
  // and host samples, one on the thread beyond int64.
  Range op_named_like_a_step;
  op_named_like_a_step.start_ns = 31;
  op_named_like_a_step.end_ns = 32;
  op_named_like_a_step.thread = 4242;
  op_named_like_a_step.name = t.strings.Intern("ProfilerStep#9");
  op_named_like_a_step.kind = RangeKind::kFrameworkOp;
  t.ranges.push_back(op_named_like_a_step);
  for (const auto& [at, thread, stack] : std::vector<std::tuple<int64_t, uint64_t, std::string>>{
           {5, 4242, "train.py:10 main\nloader.py:99 __next__"},
           {66050, 18446744073709551557ull, "a \"quoted\" frame:1 f"},
           {70000, 4243, ""}}) {
    HostSample sample;
    sample.time_ns = at;
    sample.thread = thread;
    sample.stack = t.strings.Intern(stack);
    t.samples.push_back(sample);
  }

  // Collective args: all of them on the NCCL kernel; only some on a second one, which the
  // name does not call communication.
  for (DeviceOp& op : t.devices[0].ops) {
    if (!op.communication) continue;
    op.collective = static_cast<uint32_t>(t.collectives.size());
    t.collectives.push_back(CollectiveArgs{t.strings.Intern("0"), t.strings.Intern("allreduce"),
                                           /*seq=*/41, /*bytes=*/int64_t{16777216} * 4});
  }
  DeviceOp partial;
  partial.start_ns = 67000;
  partial.end_ns = 67500;
  partial.name = t.strings.Intern("myAllGatherKernel");
  partial.communication = true;
  partial.stream = 7;
  partial.collective = static_cast<uint32_t>(t.collectives.size());
  t.collectives.push_back(CollectiveArgs{StringTable::kEmpty, t.strings.Intern("all_gather"),
                                         /*seq=*/-1, /*bytes=*/-1});
  t.devices[0].ops.push_back(partial);

  TimelineInfo& info = t.info;
  info.source = "gpuidle";
  info.rank = 3;
  info.world_size = 8;
  info.visible_devices = {0, 1, 2};
  info.visible_device_names = {"NVIDIA H200", "NVIDIA H200", "NVIDIA H100 80GB HBM3"};
  info.visible_device_uuids = {"GPU-2f9c1a7e-0b3d-4c55-9e61-7a8b9c0d1e2f", "",
                               "GPU-00000000-1111-2222-3333-444444444444"};
  info.visible_device_physical = {4, -1, 6};
  t.devices[0].name = t.devices[1].name = "NVIDIA H200";
  info.dropped_records = 17;
  info.zero_timestamp_records = 2;
  info.record_limit_reached = true;
  info.pid = 31337;
  info.host = "node-17";
  info.wall_clock_offset_ns = 1764500000123456789;
  t.Finalize();
  return t;
}

class TraceRoundTripTest : public ::testing::Test {
 protected:
  absl::StatusOr<Timeline> Read(absl::string_view contents, absl::string_view name = "t.json") {
    return ReadTraceFile(dir_.Write(name, contents));
  }
  // The same without the read-ahead thread and its 1 MiB chunks: for the many small traces of
  // the property test.
  absl::StatusOr<Timeline> ReadDirect(absl::string_view contents) {
    absl::StatusOr<std::unique_ptr<ByteSource>> source =
        OpenByteSource(dir_.Write("t.json", contents));
    if (!source.ok()) return source.status();
    return ReadKinetoTrace(**source, size_t{1} << 16);
  }
  Timeline RoundTrip(const Timeline& t, const Report* report = nullptr) {
    absl::StatusOr<Timeline> back = Read(FormatTraceWithGaps(t, report));
    EXPECT_TRUE(back.ok()) << back.status();
    return back.ok() ? std::move(back).value() : Timeline();
  }

  TempDir dir_;
};

TEST_F(TraceRoundTripTest, HandBuiltTimelineComesBackFieldByField) {
  const Timeline t = EveryKindTimeline();
  const Timeline back = RoundTrip(t);
  EXPECT_EQ(FirstDifference(t, back), "");
  EXPECT_EQ(back.info.source, "gpuidle");
  // The fixture really holds what it claims.
  ASSERT_EQ(back.devices.size(), 2u);
  EXPECT_EQ(back.devices[1].ops.size(), 7u);
  EXPECT_EQ(back.samples.size(), 3u);
  EXPECT_EQ(t.collectives.size(), 2u);
  EXPECT_EQ(back.collectives.size(), 2u);
}

TEST_F(TraceRoundTripTest, CollectiveArgsAreWrittenUnderPyTorchsNames) {
  const std::string json = FormatGpuidleTrace(EveryKindTimeline());
  EXPECT_THAT(json, HasSubstr("\"Collective name\":\"allreduce\",\"Process Group Name\":\"0\","
                              "\"Seq\":41,\"In msg nelems\":67108864,\"Out msg nelems\":67108864,"
                              "\"dtype\":\"Byte\""));
  EXPECT_THAT(json, HasSubstr("\"uuid\": \"GPU-2f9c1a7e-0b3d-4c55-9e61-7a8b9c0d1e2f\", "
                              "\"gpuidle_physical_index\": 4}"));
}

TEST_F(TraceRoundTripTest, DevicesWithoutUuidOrPhysicalIndexReadBackWithoutThem) {
  Timeline t = EveryKindTimeline();
  t.info.visible_device_uuids = {"", "", ""};
  t.info.visible_device_physical = {-1, -1, -1};
  const Timeline back = RoundTrip(t);
  EXPECT_TRUE(back.info.visible_device_uuids.empty());
  EXPECT_TRUE(back.info.visible_device_physical.empty());
  EXPECT_EQ(back.info.visible_devices, t.info.visible_devices);
}

TEST_F(TraceRoundTripTest, TimelineWithoutOptionalInfoComesBackWithoutIt) {
  const Timeline t = TimelineBuilder().Launch(1, 0, 1).Kernel(0, 5).Build();
  const Timeline back = RoundTrip(t);
  EXPECT_EQ(FirstDifference(t, back), "");
  EXPECT_FALSE(back.info.pid.has_value());
  EXPECT_FALSE(back.info.dropped_records.has_value());
  EXPECT_FALSE(back.info.rank.has_value());
  EXPECT_FALSE(back.info.wall_clock_offset_ns.has_value());
}

TEST_F(TraceRoundTripTest, KernelAtTimeZeroIsKeptNotTakenForAMissingTimeStamp) {
  const Timeline t = TimelineBuilder().Kernel(0, 1).Kernel(0, 2).Build();
  const Timeline back = RoundTrip(t);
  EXPECT_EQ(FirstDifference(t, back), "");
  EXPECT_EQ(back.info.zero_timestamp_records, 0u);
}

TEST_F(TraceRoundTripTest, EmptyTimelineComesBackEmpty) {
  Timeline t;
  t.Finalize();
  const Timeline back = RoundTrip(t);
  EXPECT_EQ(FirstDifference(t, back), "");
  EXPECT_FALSE(back.HasActivity());
}

TEST_F(TraceRoundTripTest, NamesThatNeedEscapingComeBackByteForByte) {
  const std::string name = "k<\"quoted\">\\path\n\ttab\x01\x1f end \xc3\xa9";
  Timeline t = TimelineBuilder().Kernel(1, 2, name).Op(1, 0, 3, name).Build();
  t.info.host = "host \"with\" quotes\\";
  const Timeline back = RoundTrip(t);
  EXPECT_EQ(FirstDifference(t, back), "");
}

TEST_F(TraceRoundTripTest, GzippedTraceReadsTheSame) {
  const Timeline t = EveryKindTimeline();
  absl::StatusOr<Timeline> back = Read(Gzip(FormatGpuidleTrace(t)), "t.json.gz");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(FirstDifference(t, *back), "");
}

TEST_F(TraceRoundTripTest, TraceReadsTheSameInChunksOfAnySize) {
  // Tiny chunks put every token of the new args and of the "gpuidle" object across a chunk
  // boundary, where the reader's fast scanners hand over to RapidJSON's own code.
  const Timeline t = EveryKindTimeline();
  const std::string path = dir_.Write("t.json", FormatGpuidleTrace(t));
  for (size_t chunk : {1, 2, 3, 7, 64, 4093}) {
    absl::StatusOr<std::unique_ptr<ByteSource>> source = OpenByteSource(path);
    ASSERT_TRUE(source.ok()) << source.status();
    absl::StatusOr<Timeline> back = ReadKinetoTrace(**source, chunk);
    ASSERT_TRUE(back.ok()) << back.status() << " with chunks of " << chunk;
    EXPECT_EQ(FirstDifference(t, *back), "") << "chunk of " << chunk << " bytes";
  }
}

TEST_F(TraceRoundTripTest, GapSlicesOfTheReportAreIgnoredOnRead) {
  const Timeline t = EveryKindTimeline();
  absl::StatusOr<Report> report = Analyze(t, AnalysisOptions());
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_FALSE(report->longest_gaps.empty());
  const std::string with_gaps = FormatTraceWithGaps(t, &*report);
  EXPECT_THAT(with_gaps, HasSubstr("\"gpuidle_gap\""));
  absl::StatusOr<Timeline> back = Read(with_gaps);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(FirstDifference(t, *back), "");
}

// Reports of two timelines as JSON, without what names the input (inputs, source).
std::string ReportJson(const Timeline& t, const AnalysisOptions& options) {
  absl::StatusOr<Report> r = Analyze(t, options);
  if (!r.ok()) return r.status().ToString();
  r->inputs.clear();
  r->source.clear();
  absl::StatusOr<std::string> json = FormatReport(*r, "json");
  return json.ok() ? *json : json.status().ToString();
}

TEST_F(TraceRoundTripTest, RandomTimelinesGiveIdenticalTimelinesAndReports) {
  std::mt19937_64 rng(20261201);
  int reports_compared = 0;
  for (int iteration = 0; iteration < 300; ++iteration) {
    SCOPED_TRACE(::testing::Message() << "iteration " << iteration);
    const Timeline t = RandomTimeline(rng, {.every_kind = true});
    AnalysisOptions options;
    options.launch_gap_max_ns = 1000 * (1 + static_cast<int64_t>(rng() % 2000));
    // With the report's gaps drawn in half of the traces: they must change nothing.
    absl::StatusOr<Report> report = Analyze(t, options);
    const Report* gaps = report.ok() && iteration % 2 == 0 ? &*report : nullptr;
    absl::StatusOr<Timeline> back = ReadDirect(FormatTraceWithGaps(t, gaps));
    ASSERT_TRUE(back.ok()) << back.status();
    ASSERT_EQ(FirstDifference(t, *back), "");
    EXPECT_EQ(back->info.source, "gpuidle");
    if (!report.ok()) continue;
    ++reports_compared;
    EXPECT_EQ(ReportJson(t, options), ReportJson(*back, options));
  }
  EXPECT_GT(reports_compared, 250);
}

TEST_F(TraceRoundTripTest, RecordedPyTorchTracesComeBackFieldByFieldWithTheSameReport) {
  // Real names, streams, syncs and ranges of H200 runs: read, written as gpuidle traces, read.
  int traces = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(GPUIDLE_TEST_DATA_DIR "/traces/torch")) {
    const std::string path = entry.path().string();
    if (!absl::EndsWith(path, ".json.gz")) continue;
    SCOPED_TRACE(path);
    absl::StatusOr<Timeline> original = ReadTraceFile(path);
    ASSERT_TRUE(original.ok()) << original.status();
    absl::StatusOr<Report> report = Analyze(*original, AnalysisOptions());
    ASSERT_TRUE(report.ok()) << report.status();
    const Timeline back = RoundTrip(*original, &*report);
    EXPECT_EQ(FirstDifference(*original, back), "");
    EXPECT_EQ(ReportJson(*original, AnalysisOptions()), ReportJson(back, AnalysisOptions()));
    ++traces;
  }
  EXPECT_GE(traces, 5);
}

TEST_F(TraceRoundTripTest, UnsupportedFormatVersionIsRejectedNamingIt) {
  const std::string trace = FormatGpuidleTrace(EveryKindTimeline());
  const std::string newer = absl::StrReplaceAll(trace, {{"gpuidle.trace/2", "gpuidle.trace/3"}});
  ASSERT_NE(newer, trace);
  absl::StatusOr<Timeline> back = Read(newer);
  ASSERT_FALSE(back.ok());
  EXPECT_EQ(back.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(back.status().message(), HasSubstr("unsupported gpuidle trace format"));
  EXPECT_THAT(back.status().message(), HasSubstr("\"gpuidle.trace/3\""));
  EXPECT_THAT(back.status().message(), HasSubstr("\"gpuidle.trace/2\""));
}

TEST_F(TraceRoundTripTest, TracesOfTheFirstFormatWithoutSamplesAreReadToo) {
  const std::string trace = FormatGpuidleTrace(EveryKindTimeline());
  const std::string older = absl::StrReplaceAll(trace, {{"gpuidle.trace/2", "gpuidle.trace/1"}});
  ASSERT_NE(older, trace);
  EXPECT_TRUE(Read(older).ok());
}

TEST_F(TraceRoundTripTest, GpuidleObjectAfterTheEventsIsReadToo) {
  absl::StatusOr<Timeline> t = Read(
      R"({"traceEvents": [], "gpuidle": {"format": "gpuidle.trace/1", "pid": 7,
          "host": "h", "dropped_records": null, "zero_timestamp_records": 3,
          "record_limit_reached": true, "future_key": {"a": [1, 2]}}})");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->info.source, "gpuidle");
  EXPECT_EQ(t->info.pid, 7);
  EXPECT_EQ(t->info.host, "h");
  EXPECT_FALSE(t->info.dropped_records.has_value());
  EXPECT_EQ(t->info.zero_timestamp_records, 3u);
  EXPECT_TRUE(t->info.record_limit_reached);
}

TEST_F(TraceRoundTripTest, ThreadIdsBeyondInt64AreReadExactlyFromTid) {
  absl::StatusOr<Timeline> t = Read(
      R"({"traceEvents": [{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
          "pid": 1, "tid": 18446744073709551557, "ts": 1, "dur": 1}]})");
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->calls.size(), 1u);
  EXPECT_EQ(t->calls[0].thread, 18446744073709551557ull);
}

TEST_F(TraceRoundTripTest, KinetoTraceKeepsItsSource) {
  absl::StatusOr<Timeline> t = Read(R"({"traceEvents": []})");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->info.source, "pytorch-profiler");
}

TEST_F(TraceRoundTripTest, MalformedGpuidleMetadataIsRejectedWithWhatIsWrong) {
  const auto error = [&](absl::string_view gpuidle) {
    absl::StatusOr<Timeline> t =
        Read(absl::StrCat(R"({"gpuidle": )", gpuidle, R"(, "traceEvents": []})"));
    EXPECT_FALSE(t.ok()) << gpuidle;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << gpuidle;
    return std::string(t.status().message());
  };
  EXPECT_THAT(error(R"({"pid": 1})"), HasSubstr("has no \"format\""));
  EXPECT_THAT(error(R"("gpuidle.trace/1")"), HasSubstr("\"gpuidle\" must be an object"));
  EXPECT_THAT(error(R"([])"), HasSubstr("\"gpuidle\" must be an object"));
  EXPECT_THAT(error(R"({"format": 1})"), HasSubstr("\"format\" must be a string"));
  EXPECT_THAT(error(R"({"format": "gpuidle.trace/1", "pid": "7"})"),
              HasSubstr("\"pid\" must be an integer or null, not a string"));
  EXPECT_THAT(error(R"({"format": "gpuidle.trace/1", "rank": 1.5})"),
              HasSubstr("\"rank\" = 1.5 is not an integer in range"));
  EXPECT_THAT(error(R"({"format": "gpuidle.trace/1", "record_limit_reached": 1})"),
              HasSubstr("\"record_limit_reached\" must be a boolean"));
}

TEST_F(TraceRoundTripTest, UnknownKindArgsAreSkippedWithAWarningThatListsTheValuesThereAre) {
  const auto warnings = [&](absl::string_view cat, absl::string_view args) {
    absl::StatusOr<Timeline> t = Read(absl::StrCat(
        R"({"traceEvents": [{"ph": "X", "cat": ")", cat,
        R"(", "name": "n", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": )", args, "}]}"));
    EXPECT_TRUE(t.ok()) << t.status();
    EXPECT_TRUE(t.ok() && t->HasActivity()) << "the event is kept, without the arg";
    return t.ok() ? absl::StrJoin(t->info.warnings, "\n") : std::string();
  };
  EXPECT_THAT(warnings("user_annotation", R"({"gpuidle_kind": "epoch"})"),
              HasSubstr("\"args.gpuidle_kind\" of 1 user_annotation events: it is not one of "
                        "step, data, user, framework_op or python (first: \"epoch\")"));
  EXPECT_THAT(warnings("cuda_runtime", R"({"gpuidle_category": "launches"})"),
              HasSubstr("\"args.gpuidle_category\" of 1 cuda_runtime events: it is not one of "
                        "launch"));
  EXPECT_THAT(warnings("gpu_memcpy", R"({"gpuidle_copy_kind": "H2D"})"),
              HasSubstr("\"args.gpuidle_copy_kind\" of 1 gpu_memcpy events: it is not one of "
                        "unknown, HtoD"));
  EXPECT_THAT(warnings("kernel", R"({"gpuidle_communication": 1})"),
              HasSubstr("\"args.gpuidle_communication\" of 1 kernel events: it is not a boolean"));
}

TEST_F(TraceRoundTripTest, HostSamplesAreInstantEventsOnTheirThreadsTrack) {
  Timeline t = TimelineBuilder().Launch(4242, 10, 12).Kernel(20, 30).Build();
  HostSample sample;
  sample.time_ns = 15;
  sample.thread = 4242;
  sample.stack = t.strings.Intern("train.py:10 main\nloader.py:99 __next__");
  t.samples.push_back(sample);
  const std::string trace = FormatGpuidleTrace(t);
  EXPECT_THAT(trace, HasSubstr(R"({"ph":"i","cat":"gpuidle_host_sample","name":"host sample",)"
                               R"("pid":1,"tid":4242,"s":"t","ts":)"));
  EXPECT_THAT(trace, HasSubstr(R"("args":{"stack":"train.py:10 main\nloader.py:99 __next__"}})"));
  const Timeline back = RoundTrip(t);
  EXPECT_EQ(FirstDifference(t, back), "");
  ASSERT_EQ(back.samples.size(), 1u);
  EXPECT_EQ(back.strings.Get(back.samples[0].stack), "train.py:10 main\nloader.py:99 __next__");
}

TEST_F(TraceRoundTripTest, SamplesDoNotWidenTheWindow) {
  Timeline t = TimelineBuilder().Launch(1, 1000, 1010).Kernel(1020, 1030).Build();
  for (int64_t at : {int64_t{10}, int64_t{5000000}}) {
    HostSample sample;
    sample.time_ns = at;
    sample.thread = 1;
    t.samples.push_back(sample);
  }
  absl::StatusOr<Report> before = Analyze(
      TimelineBuilder().Launch(1, 1000, 1010).Kernel(1020, 1030).Build(), AnalysisOptions());
  const Timeline back = RoundTrip(t);
  EXPECT_EQ(FirstDifference(t, back), "");
  absl::StatusOr<Report> after = Analyze(back, AnalysisOptions());
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_EQ(after->window_start_ns, before->window_start_ns);
  EXPECT_EQ(after->window_end_ns, before->window_end_ns);
}

}  // namespace
}  // namespace gpuidle::internal
