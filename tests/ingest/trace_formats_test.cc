// The trace generations and producers the reader accepts (docs/TRACE_INPUTS.md), one small
// hand-written trace each: files under tests/data/traces/formats/ where the shape is the point,
// inline events where one field is.
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gpuidle/analyze.h"
#include "gtest/gtest.h"
#include "ingest/read_trace.h"
#include "model/timeline.h"
#include "testing/temp_dir.h"

namespace gpuidle::internal {
namespace {

using ::gpuidle::testing::TempDir;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

std::string FormatPath(absl::string_view name) {
  return absl::StrCat(GPUIDLE_TEST_DATA_DIR, "/traces/formats/", name);
}

Timeline ReadFormat(absl::string_view name) {
  absl::StatusOr<Timeline> t = ReadTraceFile(FormatPath(name));
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? std::move(t).value() : Timeline();
}

std::string Name(const Timeline& t, StringId id) { return std::string(t.strings.Get(id)); }

const HostCall* CallAt(const Timeline& t, uint64_t correlation) {
  for (const HostCall& c : t.calls) {
    if (c.correlation_id == correlation) return &c;
  }
  return nullptr;
}

const HostCall* CallNamed(const Timeline& t, absl::string_view name) {
  for (const HostCall& c : t.calls) {
    if (t.strings.Get(c.name) == name) return &c;
  }
  return nullptr;
}

const Range* RangeNamed(const Timeline& t, absl::string_view name) {
  for (const Range& r : t.ranges) {
    if (t.strings.Get(r.name) == name) return &r;
  }
  return nullptr;
}

std::string X(absl::string_view cat, absl::string_view name, absl::string_view ts,
              absl::string_view dur, absl::string_view args = "{}", absl::string_view pid = "0",
              absl::string_view tid = "7") {
  return absl::StrCat(R"({"ph": "X", "cat": ")", cat, R"(", "name": ")", name, R"(", "pid": )", pid,
                      R"(, "tid": )", tid, R"(, "ts": )", ts, R"(, "dur": )", dur, R"(, "args": )",
                      args, "}");
}

class TraceFormatsTest : public ::testing::Test {
 protected:
  Timeline ReadEvents(const std::vector<std::string>& events, absl::string_view top = "") {
    absl::StatusOr<Timeline> t =
        ReadTraceFile(dir_.Write("t.json", absl::StrCat("{", top, "\"traceEvents\": [\n",
                                                        absl::StrJoin(events, ",\n"), "\n]}")));
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? std::move(t).value() : Timeline();
  }
  TempDir dir_;
};

// --- PyTorch 1.8: capitalised categories, a bare array, steps and data under "Operator" ---

TEST_F(TraceFormatsTest, ReadsAPyTorch18TraceOfCapitalisedCategoriesInABareArray) {
  const Timeline t = ReadFormat("pytorch_1_8.json");
  EXPECT_THAT(t.info.warnings, IsEmpty());
  EXPECT_TRUE(t.info.visible_devices.empty());  // the array has no deviceProperties
  ASSERT_THAT(t.devices, SizeIs(1));
  const std::vector<DeviceOp>& ops = t.devices[0].ops;
  ASSERT_THAT(ops, SizeIs(3));
  EXPECT_EQ(ops[0].kind, OpKind::kMemcpy);
  EXPECT_EQ(ops[0].copy_kind, CopyKind::kHtoD);
  EXPECT_TRUE(ops[0].pageable);
  EXPECT_EQ(ops[0].bytes, 4096u);
  EXPECT_EQ(ops[1].kind, OpKind::kKernel);
  EXPECT_EQ(ops[1].stream, 7u);
  EXPECT_EQ(ops[1].correlation_id, 11u);
  EXPECT_EQ(ops[2].kind, OpKind::kMemset);
  EXPECT_EQ(ops[2].bytes, 512u);

  ASSERT_THAT(t.calls, SizeIs(4));
  EXPECT_EQ(CallAt(t, 10)->category, CallCategory::kCopy);
  EXPECT_EQ(CallAt(t, 11)->category, CallCategory::kLaunch);
  EXPECT_EQ(CallAt(t, 12)->category, CallCategory::kLaunch);
  EXPECT_EQ(CallAt(t, 13)->category, CallCategory::kSync);
  EXPECT_EQ(CallAt(t, 11)->thread, 4242u);

  EXPECT_EQ(RangeNamed(t, "ProfilerStep#1")->kind, RangeKind::kStep);
  EXPECT_EQ(RangeNamed(t, "ProfilerStep#2")->kind, RangeKind::kStep);
  EXPECT_EQ(RangeNamed(t, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__")->kind,
            RangeKind::kData);
  EXPECT_EQ(RangeNamed(t, "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__")->kind,
            RangeKind::kData);
  EXPECT_EQ(RangeNamed(t, "aten::mm")->kind, RangeKind::kFrameworkOp);
  EXPECT_EQ(RangeNamed(t, "train.py(12): step")->kind, RangeKind::kPython);
  EXPECT_THAT(t.ranges, SizeIs(7));
}

TEST_F(TraceFormatsTest, MatchesCategoriesInAnyCase) {
  const Timeline t = ReadEvents({
      X("KERNEL", "k", "10", "1", R"({"device": 0})"),
      X("Gpu_Memcpy", "Memcpy DtoH (Device -> Pinned)", "20", "1", R"({"device": 0})"),
      X("CUDA_RUNTIME", "cudaLaunchKernel", "5", "1", "{}", "1", "1"),
      X("Cuda_Driver", "cuLaunchKernel", "6", "1", "{}", "1", "1"),
      X("CPU_OP", "aten::add", "4", "3", "{}", "1", "1"),
      X("User_Annotation", "my range", "3", "5", "{}", "1", "1"),
      X("PYTHON_FUNCTION", "a.py(1): f", "2", "9", "{}", "1", "1"),
  });
  ASSERT_THAT(t.devices, SizeIs(1));
  EXPECT_THAT(t.devices[0].ops, SizeIs(2));
  EXPECT_THAT(t.calls, SizeIs(2));
  ASSERT_THAT(t.ranges, SizeIs(3));
  EXPECT_EQ(RangeNamed(t, "aten::add")->kind, RangeKind::kFrameworkOp);
  EXPECT_EQ(RangeNamed(t, "my range")->kind, RangeKind::kUser);
  EXPECT_EQ(RangeNamed(t, "a.py(1): f")->kind, RangeKind::kPython);
}

// --- steps and data ranges are found by name in every host category ---

TEST_F(TraceFormatsTest, FindsStepsAndDataRangesByNameInEveryHostCategory) {
  const Timeline t = ReadEvents({
      X("cpu_op", "ProfilerStep#7", "0", "100", "{}", "1", "1"),
      X("python_function", "ProfilerStep#8", "100", "100", "{}", "1", "1"),
      X("user_annotation", "ProfilerStep#9", "200", "100", "{}", "1", "1"),
      X("cpu_op", "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", "1", "5", "{}",
        "1", "1"),
      X("python_function", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "101",
        "5", "{}", "1", "1"),
      X("cpu_op", "aten::mm", "10", "5", "{}", "1", "1"),
      // The GPU-side copies of user annotations are no host ranges.
      X("gpu_user_annotation", "ProfilerStep#7", "0", "100", R"({"device": 0})", "0", "7"),
      X("gpu_user_annotation", "enumerate(DataLoader)#x", "1", "5", R"({"device": 0})", "0", "7"),
  });
  ASSERT_THAT(t.ranges, SizeIs(6));
  EXPECT_EQ(RangeNamed(t, "ProfilerStep#7")->kind, RangeKind::kStep);
  EXPECT_EQ(RangeNamed(t, "ProfilerStep#7")->thread, 1u);
  EXPECT_EQ(RangeNamed(t, "ProfilerStep#8")->kind, RangeKind::kStep);
  EXPECT_EQ(RangeNamed(t, "ProfilerStep#9")->kind, RangeKind::kStep);
  EXPECT_EQ(RangeNamed(t, "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__")->kind,
            RangeKind::kData);
  EXPECT_EQ(RangeNamed(t, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__")->kind,
            RangeKind::kData);
  EXPECT_EQ(RangeNamed(t, "aten::mm")->kind, RangeKind::kFrameworkOp);
  EXPECT_TRUE(t.devices.empty());
}

// --- ROCm: hip* calls, numbers as strings, devices deviceProperties does not list ---

TEST_F(TraceFormatsTest, ReadsARocmTraceWithHipCallsAndNumbersAsStrings) {
  const Timeline t = ReadFormat("rocm.json");
  EXPECT_THAT(t.info.warnings, IsEmpty());
  EXPECT_EQ(t.info.rank, 1);
  EXPECT_EQ(t.info.world_size, 2);
  EXPECT_THAT(t.info.visible_devices, ElementsAre(0));
  // The work is on device 2, which deviceProperties does not list: a device is what the work
  // says.
  ASSERT_THAT(t.devices, SizeIs(1));
  EXPECT_EQ(t.devices[0].device, 2);
  EXPECT_EQ(t.devices[0].name, "");
  const std::vector<DeviceOp>& ops = t.devices[0].ops;
  ASSERT_THAT(ops, SizeIs(5));
  EXPECT_EQ(ops[0].kind, OpKind::kMemcpy);
  EXPECT_EQ(ops[0].copy_kind, CopyKind::kHtoD);
  EXPECT_EQ(ops[0].bytes, 9216u);
  EXPECT_EQ(ops[0].stream, 0u);
  EXPECT_EQ(ops[0].correlation_id, 120u);
  EXPECT_EQ(ops[1].correlation_id, 121u);
  EXPECT_EQ(ops[1].stream, 0u);
  EXPECT_EQ(ops[2].stream, 0x1fu);
  EXPECT_EQ(ops[3].kind, OpKind::kMemset);
  EXPECT_EQ(ops[3].bytes, 4096u);
  EXPECT_TRUE(ops[4].communication);  // RCCL
  // A stream handle beyond 32 bits gets a stand-in, distinct from the small ids.
  EXPECT_NE(ops[4].stream, kNoStream);
  EXPECT_NE(ops[4].stream, 0u);
  EXPECT_NE(ops[4].stream, 0x1fu);

  EXPECT_EQ(CallNamed(t, "hipMemcpyWithStream")->category, CallCategory::kCopy);
  EXPECT_EQ(CallNamed(t, "hipExtModuleLaunchKernel")->category, CallCategory::kLaunch);
  EXPECT_EQ(CallNamed(t, "hipLaunchKernel")->category, CallCategory::kLaunch);
  EXPECT_EQ(CallNamed(t, "hipLaunchKernel")->correlation_id, 0x7au);  // a hex string
  EXPECT_EQ(CallNamed(t, "hipMemsetAsync")->category, CallCategory::kLaunch);
  EXPECT_EQ(CallNamed(t, "hipStreamSynchronize")->category, CallCategory::kSync);
  EXPECT_EQ(CallNamed(t, "hipModuleLaunchKernel")->category, CallCategory::kLaunch);
  EXPECT_EQ(CallNamed(t, "hipDeviceSynchronize")->category, CallCategory::kSync);
  EXPECT_EQ(CallNamed(t, "hipMemcpyWithStream")->correlation_id, 120u);
}

TEST_F(TraceFormatsTest, CategorisesEveryHipCallTheAnalysisNeeds) {
  std::vector<std::string> events;
  const std::vector<std::pair<std::string, CallCategory>> calls = {
      {"hipLaunchKernel", CallCategory::kLaunch},
      {"hipExtModuleLaunchKernel", CallCategory::kLaunch},
      {"hipModuleLaunchKernel", CallCategory::kLaunch},
      {"hipHccModuleLaunchKernel", CallCategory::kLaunch},
      {"hipExtLaunchKernel", CallCategory::kLaunch},
      {"hipLaunchCooperativeKernel", CallCategory::kLaunch},
      {"hipModuleLaunchCooperativeKernel", CallCategory::kLaunch},
      {"hipExtLaunchMultiKernelMultiDevice", CallCategory::kLaunch},
      {"hipGraphLaunch", CallCategory::kLaunch},
      {"hipMemsetAsync", CallCategory::kLaunch},
      {"hipMemsetD32Async", CallCategory::kLaunch},
      {"hipMemcpyAsync", CallCategory::kCopy},
      {"hipMemcpyWithStream", CallCategory::kCopy},
      {"hipMemcpy", CallCategory::kCopy},
      {"hipMemcpy2DAsync", CallCategory::kCopy},
      {"hipDrvMemcpy2DUnaligned", CallCategory::kCopy},
      {"hipStreamSynchronize", CallCategory::kSync},
      {"hipDeviceSynchronize", CallCategory::kSync},
      {"hipEventSynchronize", CallCategory::kSync},
      {"hipCtxSynchronize", CallCategory::kSync},
      {"hipStreamWaitEvent", CallCategory::kWaitEvent},
      {"hipModuleLoadData", CallCategory::kModuleLoad},
      {"hipInit", CallCategory::kInit},
      {"hipGetDevice", CallCategory::kOther},
      {"hipEventRecord", CallCategory::kOther},
  };
  for (size_t i = 0; i < calls.size(); ++i) {
    events.push_back(X("cuda_runtime", calls[i].first, absl::StrCat(i + 1), "1",
                       absl::StrCat(R"({"correlation": ")", i + 1, R"("})"), "1", "1"));
  }
  const Timeline t = ReadEvents(events);
  ASSERT_THAT(t.calls, SizeIs(calls.size()));
  for (const auto& [name, category] : calls) {
    EXPECT_EQ(CallNamed(t, name)->category, category) << name;
  }
}

TEST_F(TraceFormatsTest, ReadsStringDevicePropertiesAndPidsAsNumbers) {
  const Timeline t = ReadEvents(
      {
          X("kernel", "k", "10", "1", R"({"stream": "7"})", R"("1")", R"("7")"),
          X("cuda_runtime", "cudaLaunchKernel", "5", "1", "{}", R"("4242")", R"("4242")"),
          X("cpu_op", "aten::mm", "4", "3", "{}", "4242", "4242"),
      },
      R"("deviceProperties": [{"id": "0", "name": "AMD Instinct MI300X"},
                              {"id": "1", "name": "AMD Instinct MI300X"}],
         "baseTimeNanoseconds": "1000000",)");
  EXPECT_THAT(t.info.warnings, IsEmpty());
  EXPECT_THAT(t.info.visible_devices, ElementsAre(0, 1));
  ASSERT_THAT(t.devices, SizeIs(1));
  EXPECT_EQ(t.devices[0].device, 1);  // from the pid "1"
  EXPECT_EQ(t.devices[0].name, "AMD Instinct MI300X");
  EXPECT_EQ(t.devices[0].ops[0].stream, 7u);
  EXPECT_EQ(t.devices[0].ops[0].start_ns, 1000000 + 10000);
  ASSERT_THAT(t.calls, SizeIs(1));
  ASSERT_THAT(t.ranges, SizeIs(1));
  EXPECT_EQ(t.calls[0].thread, 4242u);
  EXPECT_EQ(t.calls[0].thread, t.ranges[0].thread);  // "4242" and 4242 are one thread
}

TEST_F(TraceFormatsTest, WarnsAboutNumbersItCannotReadInStrings) {
  const Timeline t = ReadEvents({
      X("kernel", "k", "10", "1", R"({"device": "gpu0", "stream": "0xzz"})", "3"),
      X("kernel", "k", "12", "1", R"({"device": "-1"})", "3"),
  });
  ASSERT_THAT(t.devices, SizeIs(1));
  EXPECT_EQ(t.devices[0].device, 3);  // the pid, where the device arg is unusable
  EXPECT_THAT(t.devices[0].ops, SizeIs(2));
  EXPECT_THAT(
      t.info.warnings,
      ElementsAre("ignored the \"args.device\" of 1 kernel events: it is not an integer (first: "
                  "\"gpu0\")",
                  "ignored the \"args.device\" of 1 kernel events: it is negative (first: \"-1\")",
                  "ignored the \"args.stream\" of 1 kernel events: it is not an integer"));
}

// --- cuda_profiler_range: kernel-like device work ---

TEST_F(TraceFormatsTest, ReadsProfilerRangesOnADeviceAsKernels) {
  const Timeline t = ReadEvents(
      {
          X("cuda_profiler_range", "range with device", "10", "5",
            R"({"device": 1, "stream": 7, "correlation": 3})", "1"),
          // No device arg: the pid is device 1's (it has work) or 2's (deviceProperties).
          X("cuda_profiler_range", "range on a device pid", "20", "5", R"({"stream": 7})", "1"),
          X("cuda_profiler_range", "range on a listed device", "30", "5", "{}", "2"),
          // A pid that is no device's.
          X("cuda_profiler_range", "range on the host", "40", "5", "{}", "4242"),
      },
      R"("deviceProperties": [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}],)");
  ASSERT_THAT(t.devices, SizeIs(2));
  ASSERT_THAT(t.devices[0].ops, SizeIs(2));
  EXPECT_EQ(t.devices[0].device, 1);
  EXPECT_EQ(t.devices[0].ops[0].kind, OpKind::kKernel);
  EXPECT_EQ(Name(t, t.devices[0].ops[1].name), "range on a device pid");
  EXPECT_EQ(t.devices[1].device, 2);
  ASSERT_THAT(t.devices[1].ops, SizeIs(1));
  EXPECT_THAT(t.info.warnings,
              ElementsAre(HasSubstr("skipped 1 cuda_profiler_range events on no known device"),
                          HasSubstr("3 cuda_profiler_range events (CUPTI's range profiler: "
                                    "torch.profiler's profiler_metrics) are read as device work, "
                                    "but Kineto spaces them evenly over the profiled span")));
  EXPECT_THAT(t.gpu_throughput, IsEmpty());  // no counters among their args
  EXPECT_TRUE(t.info.device_times_made_up);
}

// Kineto writes the range profiler's metrics as the ranges' args, named as CUPTI names them
// (CuptiRangeProfiler.cpp, addRangeEvents): those gpuidle's PM sampling reads become
// throughput samples over each range, on the time base of the rest of the trace.
TEST_F(TraceFormatsTest, ReadsTheThroughputCountersOfProfilerRanges) {
  const Timeline t = ReadEvents(
      {
          X("cuda_profiler_range", "void elementwise_kernel<128, 4>", "10", "5",
            R"({"device": 0, "dram__throughput.avg.pct_of_peak_sustained_elapsed": 88.5,)"
            R"( "sm__cycles_active.avg.pct_of_peak_sustained_elapsed": 97,)"
            R"( "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 1.2e+06,)"
            R"( "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed": 1.5,)"
            R"( "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed": 0.5})"),
          // On its device's pid, placed once the trace is read; a counter as a numeric string.
          X("cuda_profiler_range", "gemm", "15", "5",
            R"({"dram__throughput.avg.pct_of_peak_sustained_elapsed": "20",)"
            R"( "pcie__read_bytes.sum.per_second": 1e9})"),
          // Values no rate can have: the range stays, the counter goes (one warning each).
          X("cuda_profiler_range", "bad", "20", "2",
            R"({"device": 0, "dram__throughput.avg.pct_of_peak_sustained_elapsed": -3,)"
            R"( "sm__cycles_active.avg.pct_of_peak_sustained_elapsed": "n/a"})"),
          X("cuda_profiler_range", "bad too", "22", "2",
            R"({"device": 0, "sm__cycles_active.avg.pct_of_peak_sustained_elapsed": "n/a"})"),
          // The same names on a kernel are no range counters.
          X("kernel", "k", "30", "5",
            R"({"device": 0, "dram__throughput.avg.pct_of_peak_sustained_elapsed": 50})"),
      },
      R"("baseTimeNanoseconds": 1000000,)");
  ASSERT_THAT(t.devices, SizeIs(1));
  EXPECT_THAT(t.devices[0].ops, SizeIs(5));
  ASSERT_THAT(t.gpu_throughput, SizeIs(2));
  EXPECT_TRUE(t.info.device_times_made_up);
  const GpuThroughputSample& a = t.gpu_throughput[0];
  EXPECT_EQ(a.device, 0);
  EXPECT_EQ(a.start_ns, 1'010'000);  // 10 us after the base time
  EXPECT_EQ(a.end_ns, 1'015'000);
  EXPECT_FLOAT_EQ(a.dram_pct, 88.5f);
  EXPECT_FLOAT_EQ(a.sm_active_pct, 97.0f);
  EXPECT_FLOAT_EQ(a.tensor_active_pct, 1.5f);  // the busier of the two tensor pipes
  EXPECT_LT(a.pcie_read_bytes_per_s, 0);       // not measured
  const GpuThroughputSample& b = t.gpu_throughput[1];
  EXPECT_EQ(b.start_ns, 1'015'000);
  EXPECT_FLOAT_EQ(b.dram_pct, 20.0f);
  EXPECT_FLOAT_EQ(b.pcie_read_bytes_per_s, 1e9f);
  EXPECT_LT(b.sm_active_pct, 0);
  EXPECT_THAT(
      t.info.warnings,
      ElementsAre(
          // An event's first unusable counter speaks for it.
          "ignored the \"args.<GPU counter>\" of 1 cuda_profiler_range events: it is not a number "
          "(first: \"n/a\")",
          "ignored the \"args.<GPU counter>\" of 1 cuda_profiler_range events: it is negative "
          "(first: \"-3\")",
          HasSubstr("; the GPU counters of 2 of them are read as GPU throughput, each range "
                    "weighing the same")));
}

// A trace in the shape torch.profiler writes with profiler_metrics: ranges spread evenly over the
// profiled span, mostly an elementwise kernel that streams memory. The report tells it
// memory-bound from the counters, and says the ranges' times are not the GPU's.
TEST(RangeProfilerTrace, TellsAMemoryBoundDeviceFromItsCounters) {
  absl::StatusOr<Report> r = AnalyzeTraceFiles({FormatPath("range_profiler_counters.json")});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->devices.size(), 1u);
  ASSERT_TRUE(r->devices[0].gpu_metrics.has_value());
  const GpuMetrics& m = *r->devices[0].gpu_metrics;
  EXPECT_EQ(m.samples, 0);  // no NVML readings
  ASSERT_TRUE(m.throughput.has_value());
  EXPECT_EQ(m.throughput->source, "range_profiler");
  EXPECT_GE(m.throughput->samples, 30);
  // 3 of 4 ranges at 89%, the rest at 55%: each range weighs the same.
  EXPECT_NEAR(m.throughput->dram_pct, 80.5, 2);
  EXPECT_NEAR(m.throughput->tensor_active_pct, 0, 1e-9);
  ASSERT_FALSE(m.findings.empty());
  EXPECT_EQ(m.findings[0].kind, "memory_bound");
  EXPECT_THAT(m.findings[0].text,
              HasSubstr("(the mean of 40 profiled ranges, each weighing the same)"));
  EXPECT_THAT(r->warnings, Contains(HasSubstr("Kineto spaces them evenly over the profiled span")));
  // The ranges leave no gaps: the report claims nothing of idle time.
  EXPECT_EQ(r->device_times, "made_up");
  EXPECT_TRUE(r->advice.empty());
  const absl::StatusOr<std::string> text = FormatReport(*r, "text");
  ASSERT_TRUE(text.ok());
  EXPECT_THAT(*text, HasSubstr("GPU throughput while busy (CUPTI range profiler, "));
  EXPECT_THAT(*text, HasSubstr("busy, but memory-bound: DRAM at 8"));
  EXPECT_THAT(*text, Not(HasSubstr("GPU metrics: none in this trace")));
  EXPECT_THAT(*text, HasSubstr("(times made up by Kineto's range profiler"));
  EXPECT_THAT(*text, HasSubstr("idle time not measured"));
  EXPECT_THAT(*text, Not(HasSubstr("nothing worth fixing")));
  const absl::StatusOr<std::string> json = FormatReport(*r, "json");
  ASSERT_TRUE(json.ok());
  EXPECT_THAT(*json, HasSubstr(R"("source": "range_profiler")"));
  EXPECT_THAT(*json, HasSubstr(R"("device_times": "made_up")"));
}

// --- cuda_sync: the GPU side of syncs and waits gives the calls their streams ---

TEST_F(TraceFormatsTest, JoinsStreamWaitEventsToTheStreamsTheyWaitOn) {
  const Timeline t = ReadFormat("cuda_sync.json");
  EXPECT_THAT(t.info.warnings, IsEmpty());
  EXPECT_THAT(t.devices, SizeIs(1));  // the kernel; cuda_sync and cuda_event are not work
  EXPECT_THAT(t.devices[0].ops, SizeIs(1));
  // wait_on_stream -1: the stream comes from the cuda_event of the awaited event's record.
  const HostCall* wait = CallAt(t, 31);
  EXPECT_EQ(wait->category, CallCategory::kWaitEvent);
  EXPECT_EQ(wait->stream, 13u);
  EXPECT_EQ(wait->peer_stream, 7u);
  // wait_on_stream given.
  EXPECT_EQ(CallAt(t, 33)->stream, 21u);
  EXPECT_EQ(CallAt(t, 33)->peer_stream, 9u);
  // wait_on_stream -1, no cuda_event: another record of the same event names its stream.
  EXPECT_EQ(CallAt(t, 34)->stream, 22u);
  EXPECT_EQ(CallAt(t, 34)->peer_stream, 9u);
  EXPECT_EQ(CallAt(t, 35)->stream, 7u);         // Event Sync
  EXPECT_EQ(CallAt(t, 36)->stream, 7u);         // Stream Sync
  EXPECT_EQ(CallAt(t, 37)->stream, kNoStream);  // Context Sync: stream -1
  EXPECT_EQ(CallAt(t, 30)->stream, kNoStream);  // cudaEventRecord calls carry none
}

TEST_F(TraceFormatsTest, TakesTheAwaitedStreamFromTheRecordCallWhereOnlyItSaysIt) {
  const Timeline t = ReadEvents({
      X("cuda_runtime", "cudaEventRecord", "1", "1", R"({"correlation": 50, "stream": 5})", "1",
        "1"),
      X("cuda_runtime", "cudaStreamWaitEvent", "3", "1", R"({"correlation": 51})", "1", "1"),
      X("cuda_sync", "Stream Wait Event", "3", "0",
        R"({"stream": 6, "correlation": 51, "wait_on_stream": -1,
            "wait_on_cuda_event_record_corr_id": 50})"),
  });
  EXPECT_EQ(CallAt(t, 51)->stream, 6u);
  EXPECT_EQ(CallAt(t, 51)->peer_stream, 5u);
}

}  // namespace
}  // namespace gpuidle::internal
