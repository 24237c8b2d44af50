#include "ingest/kineto_reader.h"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ingest/read_trace.h"
#include "model/timeline.h"
#include "testing/temp_dir.h"

namespace gpuidle::internal {
namespace {

using ::gpuidle::testing::Gzip;
using ::gpuidle::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;
using ::testing::StartsWith;
using ::testing::UnorderedElementsAre;

// A complete ("X") event of the Kineto Chrome trace.
std::string X(absl::string_view cat, absl::string_view name, absl::string_view ts,
              absl::string_view dur, absl::string_view args = "{}", absl::string_view pid = "0",
              absl::string_view tid = "7") {
  return absl::StrCat(R"({"ph": "X", "cat": ")", cat, R"(", "name": ")", name, R"(", "pid": )", pid,
                      R"(, "tid": )", tid, R"(, "ts": )", ts, R"(, "dur": )", dur, R"(, "args": )",
                      args, "}");
}

// A trace object; `top` is inserted before "traceEvents" (ends with a comma when not empty).
std::string Trace(const std::vector<std::string>& events, absl::string_view top = "") {
  return absl::StrCat("{", top, "\n\"traceEvents\": [\n", absl::StrJoin(events, ",\n"), "\n]}\n");
}

std::string Name(const Timeline& t, StringId id) { return std::string(t.strings.Get(id)); }

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

class KinetoReaderTest : public ::testing::Test {
 protected:
  absl::StatusOr<Timeline> Read(absl::string_view contents, absl::string_view name = "t.json") {
    return ReadTraceFile(dir_.Write(name, contents));
  }
  Timeline ReadOk(absl::string_view contents) {
    absl::StatusOr<Timeline> t = Read(contents);
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? std::move(t).value() : Timeline();
  }
  // Reads a file that must fail; checks that the message starts with the path and names the
  // problem.
  absl::StatusCode ReadError(absl::string_view contents, absl::string_view problem,
                             absl::string_view name = "bad.json") {
    const std::string path = dir_.Write(name, contents);
    return ExpectError(path, ReadTraceFile(path), problem);
  }
  static absl::StatusCode ExpectError(const std::string& path, const absl::StatusOr<Timeline>& t,
                                      absl::string_view problem) {
    EXPECT_FALSE(t.ok()) << "reading " << path << " should fail with \"" << problem << "\"";
    if (t.ok()) return absl::StatusCode::kOk;
    const std::string message(t.status().message());
    EXPECT_THAT(message, StartsWith(path)) << message;
    EXPECT_THAT(message, HasSubstr(std::string(problem))) << message;
    return t.status().code();
  }

  TempDir dir_;
};

// --- device work ---

TEST_F(KinetoReaderTest, RefusesDeeplyNestedInputWithAnErrorNotACrash) {
  // 100,000 '[' ran RapidJSON's recursive parser out of stack (issue 13).
  const std::string deep = "{\"traceEvents\": [], \"x\": " + std::string(100000, '[');
  EXPECT_EQ(ReadError(deep, "nested deeper than 512 levels"), absl::StatusCode::kInvalidArgument);
  // A trace nests a few levels: an args value of 20 levels is still read.
  const std::string nested = std::string(20, '[') + std::string(20, ']');
  ReadOk(R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7,
             "ts": 1, "dur": 2, "args": {"device": 0, "deep": )" +
         nested + "}}]}");
}

TEST_F(KinetoReaderTest, ReadsAKernelAsADeviceOpOnItsDevice) {
  const Timeline t = ReadOk(Trace({X("kernel", "gemm_kernel", "10.5", "2.25",
                                     R"({"device": 1, "stream": 7, "correlation": 41,
                                         "grid": [1, 2, 3], "queued": 0})")}));
  ASSERT_THAT(t.devices, SizeIs(1));
  EXPECT_EQ(t.devices[0].device, 1);
  ASSERT_THAT(t.devices[0].ops, SizeIs(1));
  const DeviceOp& op = t.devices[0].ops[0];
  EXPECT_EQ(op.kind, OpKind::kKernel);
  EXPECT_EQ(op.start_ns, 10500);
  EXPECT_EQ(op.end_ns, 12750);
  EXPECT_EQ(op.stream, 7u);
  EXPECT_EQ(op.correlation_id, 41u);
  EXPECT_EQ(Name(t, op.name), "gemm_kernel");
  EXPECT_FALSE(op.communication);
  EXPECT_EQ(t.info.source, "pytorch-profiler");
}

TEST_F(KinetoReaderTest, MarksNcclKernelsAsCommunication) {
  const Timeline t = ReadOk(Trace({X("kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "1", "1",
                                     R"({"device": 0, "stream": 20, "correlation": 3})")}));
  ASSERT_THAT(t.devices, SizeIs(1));
  ASSERT_THAT(t.devices[0].ops, SizeIs(1));
  EXPECT_TRUE(t.devices[0].ops[0].communication);
}

TEST_F(KinetoReaderTest, ReadsCopiesWithTheirKindBytesAndPageableFlag) {
  const Timeline t = ReadOk(Trace({
      X("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", "100", "50",
        R"({"device": 0, "stream": 7, "correlation": 61, "bytes": 268435456,
            "memory bandwidth GB/s": 8.02})"),
      X("gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", "200", "5",
        R"({"device": 0, "stream": 7, "correlation": 62, "bytes": 4})"),
      X("gpu_memset", "Memset (Device)", "300", "1",
        R"({"device": 0, "stream": 7, "correlation": 63, "bytes": 1024})"),
  }));
  ASSERT_THAT(t.devices, SizeIs(1));
  const std::vector<DeviceOp>& ops = t.devices[0].ops;
  ASSERT_THAT(ops, SizeIs(3));
  EXPECT_EQ(ops[0].kind, OpKind::kMemcpy);
  EXPECT_EQ(ops[0].copy_kind, CopyKind::kHtoD);
  EXPECT_TRUE(ops[0].pageable);
  EXPECT_EQ(ops[0].bytes, 268435456u);
  EXPECT_EQ(ops[0].correlation_id, 61u);
  EXPECT_EQ(ops[0].start_ns, 100000);
  EXPECT_EQ(ops[0].end_ns, 150000);
  EXPECT_EQ(ops[1].kind, OpKind::kMemcpy);
  EXPECT_EQ(ops[1].copy_kind, CopyKind::kDtoH);
  EXPECT_FALSE(ops[1].pageable);
  EXPECT_EQ(ops[1].bytes, 4u);
  EXPECT_EQ(ops[2].kind, OpKind::kMemset);
  EXPECT_EQ(ops[2].bytes, 1024u);
  EXPECT_EQ(ops[2].stream, 7u);
}

TEST_F(KinetoReaderTest, TakesTheDeviceFromThePidWhenArgsHaveNone) {
  const Timeline t = ReadOk(Trace({X("kernel", "k", "1", "1", R"({"correlation": 5})", "3")}));
  ASSERT_THAT(t.devices, SizeIs(1));
  EXPECT_EQ(t.devices[0].device, 3);
  EXPECT_EQ(t.devices[0].ops[0].stream, kNoStream);
}

TEST_F(KinetoReaderTest, KeepsTheOpsOfManyInterleavedDevicesApart) {
  std::vector<std::string> events;
  for (int round = 0; round < 3; ++round) {
    for (int device = 0; device < 8; ++device) {
      const int i = round * 8 + device;
      events.push_back(X("kernel", absl::StrCat("k", device), absl::StrCat(10 + i), "0.5",
                         absl::StrCat(R"({"device": )", device, R"(, "stream": 7, "correlation": )",
                                      100 + i, "}")));
    }
  }
  const Timeline t = ReadOk(Trace(events));
  ASSERT_THAT(t.devices, SizeIs(8));
  for (int device = 0; device < 8; ++device) {
    const DeviceTimeline& d = t.devices[device];
    EXPECT_EQ(d.device, device);
    ASSERT_THAT(d.ops, SizeIs(3)) << "device " << device;
    for (int round = 0; round < 3; ++round) {
      EXPECT_EQ(Name(t, d.ops[round].name), absl::StrCat("k", device));
      EXPECT_EQ(d.ops[round].correlation_id, static_cast<uint64_t>(100 + round * 8 + device));
    }
  }
}

TEST_F(KinetoReaderTest, SkipsAndCountsGpuRecordsWithoutTimeStamps) {
  const Timeline t = ReadOk(Trace({
      X("kernel", "lost", "0", "0", R"({"device": 0, "stream": 7, "correlation": 1})"),
      X("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", "0", "3", R"({"device": 0})"),
      X("kernel", "kept", "5", "1", R"({"device": 0, "stream": 7, "correlation": 2})"),
      X("cuda_runtime", "cudaLaunchKernel", "0", "1", R"({"correlation": 1})", "544", "544"),
  }));
  EXPECT_EQ(t.info.zero_timestamp_records, 2u);
  ASSERT_THAT(t.devices, SizeIs(1));
  ASSERT_THAT(t.devices[0].ops, SizeIs(1));
  EXPECT_EQ(Name(t, t.devices[0].ops[0].name), "kept");
  EXPECT_THAT(t.calls, SizeIs(1));  // only GPU records lose their time stamps
}

TEST_F(KinetoReaderTest, SortsWhatItReadsByStartTime) {
  const Timeline t = ReadOk(Trace({
      X("kernel", "late", "30", "1", R"({"device": 0})"),
      X("kernel", "early", "10", "1", R"({"device": 0})"),
      X("cuda_runtime", "cudaLaunchKernel", "20", "1", "{}", "1", "1"),
      X("cuda_runtime", "cudaGetDevice", "5", "1", "{}", "1", "1"),
      X("cpu_op", "aten::mm", "8", "1", "{}", "1", "1"),
      X("cpu_op", "aten::add", "2", "1", "{}", "1", "1"),
  }));
  ASSERT_THAT(t.devices, SizeIs(1));
  ASSERT_THAT(t.devices[0].ops, SizeIs(2));
  EXPECT_EQ(Name(t, t.devices[0].ops[0].name), "early");
  ASSERT_THAT(t.calls, SizeIs(2));
  EXPECT_EQ(Name(t, t.calls[0].name), "cudaGetDevice");
  ASSERT_THAT(t.ranges, SizeIs(2));
  EXPECT_EQ(Name(t, t.ranges[0].name), "aten::add");
}

// --- host calls ---

TEST_F(KinetoReaderTest, ReadsCudaCallsWithTheirCategories) {
  const Timeline t = ReadOk(Trace({
      X("cuda_runtime", "cudaLaunchKernel", "1", "2", R"({"cbid": 211, "correlation": 11})", "544",
        "601"),
      X("cuda_driver", "cuLaunchKernel", "4", "1", R"({"correlation": 12})", "544", "601"),
      X("cuda_runtime", "cudaStreamSynchronize", "6", "100", R"({"correlation": 13})", "544",
        "601"),
      X("cuda_runtime", "cudaMemcpyAsync", "110", "3", R"({"correlation": 14})", "544", "601"),
      X("cuda_runtime", "cudaStreamWaitEvent", "120", "1", R"({"correlation": 15})", "544", "601"),
      X("cuda_runtime", "cudaGetDevice", "130", "1", R"({"correlation": 16})", "544", "601"),
  }));
  ASSERT_THAT(t.calls, SizeIs(6));
  EXPECT_EQ(CallNamed(t, "cudaLaunchKernel")->category, CallCategory::kLaunch);
  EXPECT_EQ(CallNamed(t, "cuLaunchKernel")->category, CallCategory::kLaunch);
  EXPECT_EQ(CallNamed(t, "cudaStreamSynchronize")->category, CallCategory::kSync);
  EXPECT_EQ(CallNamed(t, "cudaMemcpyAsync")->category, CallCategory::kCopy);
  EXPECT_EQ(CallNamed(t, "cudaStreamWaitEvent")->category, CallCategory::kWaitEvent);
  EXPECT_EQ(CallNamed(t, "cudaGetDevice")->category, CallCategory::kOther);
  const HostCall& sync = *CallNamed(t, "cudaStreamSynchronize");
  EXPECT_EQ(sync.start_ns, 6000);
  EXPECT_EQ(sync.end_ns, 106000);
  EXPECT_EQ(sync.thread, 601u);
  EXPECT_EQ(sync.correlation_id, 13u);
  EXPECT_EQ(sync.stream, kNoStream);  // no cuda_sync record says which
  EXPECT_TRUE(t.devices.empty());
}

TEST_F(KinetoReaderTest, JoinsCudaSyncStreamsToTheirCalls) {
  const Timeline t = ReadOk(Trace({
      X("cuda_runtime", "cudaStreamWaitEvent", "10", "1", R"({"correlation": 21})", "544", "544"),
      X("cuda_runtime", "cudaStreamSynchronize", "20", "30", R"({"correlation": 22})", "544",
        "544"),
      X("cuda_sync", "Wait Event", "10.5", "0",
        R"({"device": 0, "stream": 7, "correlation": 21, "wait_on_stream": 13,
            "wait_on_cuda_event_record_corr_id": 9})",
        "0", R"("stream 7 ")"),
      X("cuda_sync", "Stream Sync", "20", "30", R"({"device": 0, "stream": 13, "correlation": 22})",
        "0", R"("stream 13 ")"),
      X("cuda_sync", "Stream Sync", "60", "1", R"({"device": 0, "stream": 9, "correlation": 999})",
        "0", "9"),
  }));
  ASSERT_THAT(t.calls, SizeIs(2));
  const HostCall& wait = *CallNamed(t, "cudaStreamWaitEvent");
  EXPECT_EQ(wait.stream, 7u);
  EXPECT_EQ(wait.peer_stream, 13u);
  const HostCall& sync = *CallNamed(t, "cudaStreamSynchronize");
  EXPECT_EQ(sync.stream, 13u);
  EXPECT_EQ(sync.peer_stream, kNoStream);
  EXPECT_TRUE(t.devices.empty());  // cuda_sync records are not device work
}

TEST_F(KinetoReaderTest, HashesStringThreadIdsConsistently) {
  const Timeline t = ReadOk(Trace({
      X("cuda_runtime", "cudaLaunchKernel", "1", "1", "{}", R"("Spans")", R"("main thread")"),
      X("cuda_runtime", "cudaGetDevice", "3", "1", "{}", R"("Spans")", R"("main thread")"),
      X("cuda_runtime", "cudaMalloc", "5", "1", "{}", R"("Spans")", R"("other thread")"),
  }));
  ASSERT_THAT(t.calls, SizeIs(3));
  EXPECT_EQ(t.calls[0].thread, t.calls[1].thread);
  EXPECT_NE(t.calls[0].thread, t.calls[2].thread);
}

// --- host ranges ---

TEST_F(KinetoReaderTest, ClassifiesHostRanges) {
  const Timeline t = ReadOk(Trace({
      X("user_annotation", "ProfilerStep#3", "0", "1000", "{}", "544", "544"),
      X("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "1", "50",
        "{}", "544", "544"),
      X("user_annotation", "my_region", "60", "5", "{}", "544", "544"),
      X("cpu_op", "aten::mm", "70", "20", R"({"External id": 9, "Sequence number": 0})", "544",
        "544"),
      X("python_function", "train.py(21): step", "65", "40", R"({"Python id": 4})", "544", "544"),
      X("gpu_user_annotation", "ProfilerStep#3", "0", "1000", "{}", "0", "7"),
  }));
  ASSERT_THAT(t.ranges, SizeIs(5));
  EXPECT_EQ(RangeNamed(t, "ProfilerStep#3")->kind, RangeKind::kStep);
  EXPECT_EQ(RangeNamed(t, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__")->kind,
            RangeKind::kData);
  EXPECT_EQ(RangeNamed(t, "my_region")->kind, RangeKind::kUser);
  EXPECT_EQ(RangeNamed(t, "aten::mm")->kind, RangeKind::kFrameworkOp);
  EXPECT_EQ(RangeNamed(t, "train.py(21): step")->kind, RangeKind::kPython);
  const Range& mm = *RangeNamed(t, "aten::mm");
  EXPECT_EQ(mm.start_ns, 70000);
  EXPECT_EQ(mm.end_ns, 90000);
  EXPECT_EQ(mm.thread, 544u);
  EXPECT_TRUE(t.devices.empty());  // gpu_user_annotation is not device work
}

TEST_F(KinetoReaderTest, RecordFunctionRangesNamedAsGpuidleRequestsAreRequests) {
  // torch.profiler's record_function("gpuidle.request:7") around a request, and
  // record_function("gpuidle.request_run:7") around the part the server worked on.
  const Timeline t = ReadOk(Trace({
      X("user_annotation", "gpuidle.request:7", "100", "900", "{}", "544", "544"),
      X("user_annotation", "gpuidle.request_run:7", "300", "650", "{}", "544", "545"),
      X("user_annotation", "gpuidle.request", "2000", "10", "{}", "544", "544"),
      X("user_annotation", "gpuidle.requests", "3000", "10", "{}", "544", "544"),
  }));
  ASSERT_THAT(t.ranges, SizeIs(4));
  const Range& request = *RangeNamed(t, "gpuidle.request:7");
  EXPECT_EQ(request.kind, RangeKind::kRequest);
  EXPECT_EQ(request.start_ns, 100000);
  EXPECT_EQ(request.end_ns, 1000000);
  EXPECT_EQ(request.thread, 544u);
  const Range& run = *RangeNamed(t, "gpuidle.request_run:7");
  EXPECT_EQ(run.kind, RangeKind::kRequestRun);
  EXPECT_EQ(run.start_ns, 300000);
  EXPECT_EQ(run.end_ns, 950000);
  EXPECT_EQ(run.thread, 545u);
  EXPECT_EQ(RangeNamed(t, "gpuidle.request")->kind, RangeKind::kRequest);
  // Only the exact name, or the name and an id: another name that begins alike is the user's.
  EXPECT_EQ(RangeNamed(t, "gpuidle.requests")->kind, RangeKind::kUser);
}

TEST_F(KinetoReaderTest, IgnoresEventsThatAreNotCompleteOrOfAnotherCategory) {
  const Timeline t = ReadOk(Trace({
      R"({"name": "thread_name", "ph": "M", "pid": 544, "tid": 544, "args": {"name": "x"}})",
      R"({"ph": "f", "id": 41, "pid": 0, "tid": 7, "ts": 5, "cat": "ac2g", "name": "ac2g"})",
      R"({"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": 9})",
      X("Trace", "PyTorch Profiler (0)", "1", "100", R"({"Op count": 0})", R"("Spans")",
        R"("PyTorch Profiler")"),
      R"({"ph": "X", "cat": "unknown_category", "name": "no times"})",
      R"({"ph": "B", "cat": "kernel", "name": "a begin event", "ts": 3, "pid": 0, "tid": 7})",
      X("kernel", "k", "10", "1", R"({"device": 0, "nested": {"correlation": "x"}})"),
  }));
  ASSERT_THAT(t.devices, SizeIs(1));
  ASSERT_THAT(t.devices[0].ops, SizeIs(1));
  EXPECT_EQ(t.devices[0].ops[0].correlation_id, kNoCorrelation);
  EXPECT_TRUE(t.calls.empty());
  EXPECT_TRUE(t.ranges.empty());
}

// --- trace metadata ---

TEST_F(KinetoReaderTest, ReadsDevicePropertiesAndNamesTheDevices) {
  const Timeline t = ReadOk(Trace({X("kernel", "k", "10", "1", R"({"device": 1, "stream": 7})")},
                                  R"("schemaVersion": 1,
         "deviceProperties": [
           {"id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150109880320, "numSms": 132},
           {"id": 1, "name": "NVIDIA H100", "computeMajor": 9, "extra": {"id": 7}}
         ],)"));
  EXPECT_THAT(t.info.visible_devices, ElementsAre(0, 1));
  EXPECT_THAT(t.info.visible_device_names, ElementsAre("NVIDIA H200", "NVIDIA H100"));
  ASSERT_THAT(t.devices, SizeIs(1));
  EXPECT_EQ(t.devices[0].name, "NVIDIA H100");
}

TEST_F(KinetoReaderTest, ReadsMetadataThatFollowsTheEvents) {
  const std::string text =
      absl::StrCat(R"({"traceEvents": [)", X("kernel", "k", "10", "1", R"({"device": 0})"),
                   R"(], "deviceProperties": [{"id": 0, "name": "NVIDIA H200"}],
         "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8},
         "baseTimeNanoseconds": 1000000})");
  const Timeline t = ReadOk(text);
  ASSERT_THAT(t.devices, SizeIs(1));
  EXPECT_EQ(t.devices[0].name, "NVIDIA H200");
  EXPECT_EQ(t.info.rank, 3);
  EXPECT_EQ(t.info.world_size, 8);
  EXPECT_EQ(t.devices[0].ops[0].start_ns, 1000000 + 10000);
}

TEST_F(KinetoReaderTest, ReadsRankAndWorldSize) {
  const Timeline t = ReadOk(Trace(
      {X("kernel", "k", "1", "1", R"({"device": 0})")},
      R"("distributedInfo": {"backend": "nccl", "rank": 1, "world_size": 2, "pg_count": 1},)"));
  EXPECT_EQ(t.info.rank, 1);
  EXPECT_EQ(t.info.world_size, 2);
}

// Issue 29: with a key twice, Python's json keeps the last and gpuidle read both (or the
// first): a trace checked by one tool was read as another. Keys gpuidle reads are refused twice
// in the top-level object, "distributedInfo" and "gpuidle"; keys it ignores are left alone.
TEST_F(KinetoReaderTest, RefusesAKeyItReadsTwice) {
  const std::string kernel = R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7,
                                 "ts": 1, "dur": 2, "args": {"device": 0}})";
  ReadError("{\"traceEvents\": [" + kernel + "], \"traceEvents\": []}",
            "\"traceEvents\" appears twice in the trace's top-level object");
  ReadError("{\"distributedInfo\": {\"rank\": 0}, \"traceEvents\": [" + kernel +
                "], \"distributedInfo\": {\"rank\": 1}}",
            "\"distributedInfo\" appears twice in the trace's top-level object");
  ReadError(R"({"distributedInfo": {"rank": 0, "world_size": 2, "rank": 1}, "traceEvents": [])",
            "\"rank\" appears twice in \"distributedInfo\"");
  ReadError(R"({"gpuidle": {"format": "gpuidle.trace/2", "rank": 0, "rank": 1},
                "traceEvents": []})",
            "\"rank\" appears twice in \"gpuidle\"");
  // Keys gpuidle does not read may repeat, as other tools write them.
  const Timeline t =
      ReadOk("{\"traceName\": \"a\", \"traceEvents\": [" + kernel +
             "], \"traceName\": \"b\", \"distributedInfo\": {\"pg\": 1, \"pg\": 2}}");
  EXPECT_EQ(t.devices.size(), 1u);
}

TEST_F(KinetoReaderTest, LeavesRankUnknownWithoutDistributedInfo) {
  const Timeline t = ReadOk(Trace({X("kernel", "k", "1", "1", R"({"device": 0})")}));
  EXPECT_FALSE(t.info.rank.has_value());
  EXPECT_FALSE(t.info.world_size.has_value());
  EXPECT_TRUE(t.info.visible_devices.empty());
}

TEST_F(KinetoReaderTest, AddsTheBaseTimeToEveryTimeStamp) {
  const int64_t base = 1790857026000000000;
  const Timeline t = ReadOk(Trace(
      {
          X("kernel", "k", "5173113310413.660", "2738.809",
            R"({"device": 0, "stream": 7, "correlation": 80})"),
          X("cuda_driver", "cuLaunchKernel", "5173113310373.908", "40.629",
            R"({"correlation": 80})", "544", "544"),
          X("cpu_op", "aten::mm", "5173113310232.440", "185.359", "{}", "544", "544"),
      },
      R"("baseTimeNanoseconds": 1790857026000000000,)"));
  ASSERT_THAT(t.devices, SizeIs(1));
  EXPECT_EQ(t.devices[0].ops[0].start_ns, base + 5173113310413660);
  EXPECT_EQ(t.devices[0].ops[0].end_ns, base + 5173113310413660 + 2738809);
  ASSERT_THAT(t.calls, SizeIs(1));
  EXPECT_EQ(t.calls[0].start_ns, base + 5173113310373908);
  EXPECT_EQ(t.calls[0].end_ns, base + 5173113310373908 + 40629);
  ASSERT_THAT(t.ranges, SizeIs(1));
  EXPECT_EQ(t.ranges[0].start_ns, base + 5173113310232440);
  EXPECT_EQ(t.ranges[0].end_ns, base + 5173113310232440 + 185359);
}

// --- formats ---

TEST_F(KinetoReaderTest, ReadsTheBareArrayFormat) {
  const std::string text = absl::StrCat(
      "[\n", X("kernel", "k", "10", "1", R"({"device": 0, "stream": 7, "correlation": 5})"), ",\n",
      X("cuda_runtime", "cudaLaunchKernel", "8", "1", R"({"correlation": 5})", "1", "2"), ",\n",
      X("user_annotation", "ProfilerStep#0", "7", "10", "{}", "1", "2"), "\n]\n");
  const Timeline t = ReadOk(text);
  ASSERT_THAT(t.devices, SizeIs(1));
  ASSERT_THAT(t.devices[0].ops, SizeIs(1));
  EXPECT_EQ(t.devices[0].ops[0].start_ns, 10000);
  ASSERT_THAT(t.calls, SizeIs(1));
  EXPECT_EQ(t.calls[0].correlation_id, 5u);
  ASSERT_THAT(t.ranges, SizeIs(1));
  EXPECT_EQ(t.ranges[0].kind, RangeKind::kStep);
}

TEST_F(KinetoReaderTest, ReadsAnEmptyBareArray) {
  const Timeline t = ReadOk("[]");
  EXPECT_TRUE(t.devices.empty());
  EXPECT_TRUE(t.calls.empty());
}

std::string SampleTrace() {
  return Trace(
      {
          X("kernel", "k1", "10", "1", R"({"device": 0, "stream": 7, "correlation": 5})"),
          X("cuda_runtime", "cudaLaunchKernel", "8", "1", R"({"correlation": 5})", "1", "2"),
          X("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", "20", "4",
            R"({"device": 0, "stream": 7, "correlation": 6, "bytes": 64})"),
          X("cpu_op", "aten::copy_", "18", "3", "{}", "1", "2"),
      },
      R"("deviceProperties": [{"id": 0, "name": "NVIDIA H200"}],)");
}

void ExpectSampleTimeline(const Timeline& t) {
  ASSERT_THAT(t.devices, SizeIs(1));
  EXPECT_EQ(t.devices[0].name, "NVIDIA H200");
  ASSERT_THAT(t.devices[0].ops, SizeIs(2));
  EXPECT_EQ(t.devices[0].ops[0].kind, OpKind::kKernel);
  EXPECT_EQ(t.devices[0].ops[1].kind, OpKind::kMemcpy);
  EXPECT_EQ(t.devices[0].ops[1].bytes, 64u);
  ASSERT_THAT(t.calls, SizeIs(1));
  ASSERT_THAT(t.ranges, SizeIs(1));
}

TEST_F(KinetoReaderTest, ReadsGzipTracesLikePlainOnes) {
  absl::StatusOr<Timeline> t = Read(Gzip(SampleTrace()), "t.json.gz");
  ASSERT_TRUE(t.ok()) << t.status();
  ExpectSampleTimeline(*t);
}

TEST_F(KinetoReaderTest, ReadsConcatenatedGzipMembers) {
  const std::string text = SampleTrace();
  const size_t half = text.size() / 2;
  absl::StatusOr<Timeline> t =
      Read(Gzip(text.substr(0, half)) + Gzip(text.substr(half)), "t.json.gz");
  ASSERT_TRUE(t.ok()) << t.status();
  ExpectSampleTimeline(*t);
}

TEST_F(KinetoReaderTest, AcceptsTrailingWhiteSpace) {
  ExpectSampleTimeline(ReadOk(SampleTrace() + "\n\n \t\r\n"));
}

// --- errors: every message starts with the path and names the problem ---

TEST_F(KinetoReaderTest, ReportsAMissingFile) {
  const std::string path = dir_.Path("missing.json");
  const absl::StatusCode code = ExpectError(path, ReadTraceFile(path), "No such file or directory");
  EXPECT_EQ(code, absl::StatusCode::kNotFound);
}

TEST_F(KinetoReaderTest, ReportsADirectory) {
  const std::string path = dir_.Path("traces");
  std::filesystem::create_directory(path);
  ExpectError(path, ReadTraceFile(path), "is a directory");
}

TEST_F(KinetoReaderTest, ReportsAnEmptyFile) { ReadError("", "is empty"); }

TEST_F(KinetoReaderTest, ReportsAFileOfOnlyWhiteSpace) { ReadError(" \n\t\n", "no JSON"); }

TEST_F(KinetoReaderTest, ReportsRandomBytesAsNotJson) {
  std::string bytes(4096, '\0');
  uint32_t x = 7;
  for (char& c : bytes) {
    x = x * 1103515245u + 12345u;
    c = static_cast<char>(x >> 16);
  }
  bytes[0] = 'Q';  // neither gzip magic nor the start of a JSON value
  const absl::StatusCode code = ReadError(bytes, "not JSON");
  EXPECT_EQ(code, absl::StatusCode::kInvalidArgument);
}

TEST_F(KinetoReaderTest, ReportsTruncatedJson) {
  const std::string text = SampleTrace();
  const absl::StatusCode code = ReadError(text.substr(0, text.size() / 2), "truncated");
  EXPECT_EQ(code, absl::StatusCode::kDataLoss);
  ReadError(text.substr(0, text.size() - 3), "truncated");
  ReadError("[", "truncated");
  ReadError(R"({"traceEvents": [{"ph": "X", "name": "unterminated)", "truncated");
}

TEST_F(KinetoReaderTest, ReportsTruncatedJsonInsideCompleteGzip) {
  const std::string text = SampleTrace();
  ReadError(Gzip(text.substr(0, text.size() / 2)), "truncated", "half.json.gz");
}

TEST_F(KinetoReaderTest, ReportsTruncatedGzip) {
  const std::string gz = Gzip(SampleTrace());
  const absl::StatusCode code =
      ReadError(gz.substr(0, gz.size() / 2), "truncated gzip", "cut.json.gz");
  EXPECT_EQ(code, absl::StatusCode::kDataLoss);
  // Cut inside the trailer: all the JSON is there, but the file is still incomplete.
  ReadError(gz.substr(0, gz.size() - 3), "truncated gzip", "cut.json.gz");
}

TEST_F(KinetoReaderTest, ReportsCorruptGzip) {
  std::string gz = Gzip(SampleTrace());
  for (size_t i = gz.size() / 2 - 2; i < gz.size() / 2 + 2; ++i) {
    gz[i] = static_cast<char>(gz[i] ^ 0x5a);
  }
  const absl::StatusCode code = ReadError(gz, "corrupt gzip", "bad.json.gz");
  EXPECT_EQ(code, absl::StatusCode::kDataLoss);
}

TEST_F(KinetoReaderTest, ReportsJsonThatIsNotATrace) {
  ReadError(R"({"a": 1})", "no \"traceEvents\" array");
  ReadError("{}", "no \"traceEvents\" array");
  ReadError("42", "the JSON document is a number, not a trace");
  ReadError(R"("x")", "the JSON document is a string, not a trace");
  ReadError("null", "the JSON document is null, not a trace");
  ReadError("true", "the JSON document is a boolean, not a trace");
  ReadError(R"({"x": {"traceEvents": []}})", "no \"traceEvents\" array");
}

TEST_F(KinetoReaderTest, ReportsTraceEventsThatAreNotAnArray) {
  ReadError(R"({"traceEvents": {}})", "\"traceEvents\" must be an array of events, not an object");
  ReadError(R"({"traceEvents": 5})", "\"traceEvents\" must be an array of events, not a number");
  ReadError(R"({"traceEvents": "x"})", "\"traceEvents\" must be an array of events, not a string");
  ReadError(R"({"traceEvents": null})", "\"traceEvents\" must be an array of events, not null");
}

// --- unusable fields: skipped with one warning per kind of problem, never fatal ---

TEST_F(KinetoReaderTest, SkipsEntriesThatAreNotObjectsWithOneWarning) {
  const Timeline t = ReadOk(absl::StrCat(R"({"traceEvents": [1, "x", [], null, )",
                                         X("kernel", "k", "10", "1", R"({"device": 0})"), "]}"));
  ASSERT_THAT(t.devices, SizeIs(1));
  EXPECT_THAT(t.devices[0].ops, SizeIs(1));
  EXPECT_THAT(t.info.warnings,
              ElementsAre("skipped 4 entries of \"traceEvents\" that are not objects"));
}

TEST_F(KinetoReaderTest, SkipsEventsWhoseTimesCannotBeUsedCountingEachKindOfProblem) {
  const std::string ok_args = R"({"device": 0})";
  const Timeline t = ReadOk(Trace({
      X("kernel", "k", R"("abc")", "1", ok_args),
      X("kernel", "k", R"("abc")", "1", ok_args),
      X("kernel", "k", "1", "true", ok_args),
      X("kernel", "k", "1", "-1", ok_args),
      X("kernel", "k", "1e300", "1", ok_args),
      // Time stamps near the int64 limits (+-9.2e15 us) are out of the range of
      // model/timeline.h; an end past it, or a duration over 2^52 ns, make "dur" so.
      X("kernel", "k", "-9200000000000000", "1", ok_args),
      X("kernel", "k", "8070000000000000", "1000000000000", ok_args),
      X("kernel", "k", "1", "5000000000000", ok_args),
      R"({"ph": "X", "cat": "kernel", "name": "k", "dur": 1})",
      R"({"ph": "X", "cat": "cpu_op", "name": "op", "ts": 1})",
      X("cuda_runtime", "cudaLaunchKernel", "[1]", "1", "{}", "1", "1"),
      X("kernel", "kept", "20", "1", ok_args),
      // Problems in fields of events the reader does not keep cost nothing.
      X("ac2g", "flow", "[1]", "1"),
  }));
  ASSERT_THAT(t.devices, SizeIs(1));
  ASSERT_THAT(t.devices[0].ops, SizeIs(1));
  EXPECT_EQ(Name(t, t.devices[0].ops[0].name), "kept");
  EXPECT_TRUE(t.calls.empty());
  EXPECT_TRUE(t.ranges.empty());
  EXPECT_THAT(
      t.info.warnings,
      UnorderedElementsAre(
          "skipped 2 kernel events whose \"ts\" is not a number (first: \"abc\")",
          "skipped 1 kernel events whose \"dur\" is not a number (first: \"true\")",
          "skipped 1 kernel events whose \"dur\" is negative",
          "skipped 2 kernel events whose \"ts\" is out of range (first: \"1e300\")",
          "skipped 2 kernel events whose \"dur\" is out of range",
          "skipped 1 kernel events without \"ts\"", "skipped 1 cpu_op events without \"dur\"",
          "skipped 1 cuda_runtime events whose \"ts\" is not a number"));
}

TEST_F(KinetoReaderTest, KeepsEventsWithoutTheOptionalFieldsItCannotUse) {
  const Timeline t = ReadOk(Trace({
      X("kernel", "k1", "1", "1", R"({"device": 0, "correlation": "x", "stream": 7})"),
      X("kernel", "k2", "2", "1", R"({"device": 0, "correlation": "y", "stream": 7})"),
      X("kernel", "k3", "3", "1", R"({"device": 0, "stream": {"id": 7}})"),
      X("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", "4", "1",
        R"({"device": 0, "stream": 7, "bytes": 1.5})"),
      X("kernel", "k4", "5", "1", "[]"),
      X("kernel", "k5", "6", "1", R"("args")", "0"),
      R"({"ph": "X", "cat": "kernel", "name": 5, "pid": 0, "ts": 7, "dur": 1})",
      R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": true, "ts": 8,
          "dur": 1})",
      // Unknown values of gpuidle's own args: the name's meaning stays.
      X("user_annotation", "ProfilerStep#1", "9", "1", R"({"gpuidle_kind": "epoch"})", "1", "1"),
      X("cuda_runtime", "cudaStreamSynchronize", "10", "1", R"({"gpuidle_category": "launches"})",
        "1", "1"),
      X("kernel", "k6", "11", "1", R"({"device": 0, "gpuidle_communication": 1})"),
      R"({"ph": 1, "cat": "kernel", "name": "no ph", "ts": 12, "dur": 1})",
      R"({"ph": "X", "cat": ["kernel"], "name": "no cat", "ts": 13, "dur": 1})",
  }));
  ASSERT_THAT(t.devices, SizeIs(1));
  const std::vector<DeviceOp>& ops = t.devices[0].ops;
  ASSERT_THAT(ops, SizeIs(8));
  EXPECT_EQ(ops[0].correlation_id, kNoCorrelation);
  EXPECT_EQ(ops[0].stream, 7u);
  EXPECT_EQ(ops[2].stream, kNoStream);
  EXPECT_EQ(ops[3].bytes, 0u);
  EXPECT_EQ(Name(t, ops[6].name), "");
  EXPECT_FALSE(ops[7].communication);
  ASSERT_THAT(t.ranges, SizeIs(2));
  EXPECT_EQ(RangeNamed(t, "aten::mm")->thread, 0u);
  EXPECT_EQ(RangeNamed(t, "ProfilerStep#1")->kind, RangeKind::kStep);
  ASSERT_THAT(t.calls, SizeIs(1));
  EXPECT_EQ(t.calls[0].category, CallCategory::kSync);
  EXPECT_THAT(
      t.info.warnings,
      UnorderedElementsAre(
          "ignored the \"args.correlation\" of 2 kernel events: it is not an integer (first: "
          "\"x\")",
          "ignored the \"args.stream\" of 1 kernel events: it is not a number",
          "ignored the \"args.bytes\" of 1 gpu_memcpy events: it is not an integer (first: "
          "\"1.5\")",
          "ignored the \"args\" of 2 kernel events: it is not an object",
          "ignored the \"name\" of 1 kernel events: it is not a string (first: \"5\")",
          "ignored the \"tid\" of 1 cpu_op events: it is not a number or a string (first: "
          "\"true\")",
          "ignored the \"args.gpuidle_kind\" of 1 user_annotation events: it is not one of "
          "step, data, user, framework_op or python (first: \"epoch\")",
          "ignored the \"args.gpuidle_category\" of 1 cuda_runtime events: it is not one of "
          "launch, sync, copy, wait_event, init, module_load or other (first: \"launches\")",
          "ignored the \"args.gpuidle_communication\" of 1 kernel events: it is not a boolean "
          "(first: \"1\")",
          "skipped 1 kernel events whose \"ph\" is not a string",
          "skipped 1 events whose \"cat\" is not a string"));
}

TEST_F(KinetoReaderTest, WarnsOncePerKindOfProblemHoweverManyEventsHaveIt) {
  std::vector<std::string> events;
  for (int i = 0; i < 5000; ++i) {
    events.push_back(X("kernel", "k", absl::StrCat(10 + i), R"("n/a")", R"({"device": 0})"));
  }
  events.push_back(X("kernel", "kept", "1", "1", R"({"device": 0})"));
  const Timeline t = ReadOk(Trace(events));
  EXPECT_THAT(t.info.warnings,
              ElementsAre("skipped 5000 kernel events whose \"dur\" is not a number (first: "
                          "\"n/a\")"));
  ASSERT_THAT(t.devices, SizeIs(1));
  EXPECT_THAT(t.devices[0].ops, SizeIs(1));
}

TEST_F(KinetoReaderTest, SoundTracesHaveNoWarnings) {
  EXPECT_THAT(ReadOk(SampleTrace()).info.warnings, ::testing::IsEmpty());
}

TEST_F(KinetoReaderTest, ReportsTimesThatOverflowWhenTheBaseIsAdded) {
  ReadError(Trace({X("kernel", "k", "8000000000000000", "1")},
                  R"("baseTimeNanoseconds": 1000000000000000000,)"),
            "out of range");
}

TEST_F(KinetoReaderTest, ReportsTrailingGarbage) {
  const absl::StatusCode code = ReadError(SampleTrace() + "x", "unexpected data after the end");
  EXPECT_EQ(code, absl::StatusCode::kInvalidArgument);
  ReadError(SampleTrace() + "{}", "unexpected data after the end");
  ReadError(SampleTrace() + std::string("\0garbage", 8), "unexpected data after the end");
  ReadError(Gzip(SampleTrace() + "]"), "unexpected data after the end", "trailing.json.gz");
}

TEST_F(KinetoReaderTest, ReportsMalformedJsonWithItsPosition) {
  ReadError(R"({"traceEvents": [}])", "malformed JSON at byte 17");
  ReadError(R"({"traceEvents": [{"ph": "X",}]})", "malformed JSON");
}

TEST_F(KinetoReaderTest, NamesARelativePathThatLooksLikeTheStartOfAMessage) {
  // A file called "n" holding "{}" fails with 'no "traceEvents" array'; the message must still
  // begin with the path.
  const std::filesystem::path old = std::filesystem::current_path();
  std::filesystem::current_path(dir_.path());
  dir_.Write("n", "{}");
  const absl::StatusOr<Timeline> t = ReadTraceFile("n");
  std::filesystem::current_path(old);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), StartsWith("n: no \"traceEvents\" array"));
}

// --- the recorded PyTorch traces ---

std::string Gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  EXPECT_NE(f, nullptr) << path;
  std::string out;
  if (f == nullptr) return out;
  char buffer[1 << 16];
  int n = 0;
  while ((n = gzread(f, buffer, sizeof(buffer))) > 0) out.append(buffer, static_cast<size_t>(n));
  gzclose(f);
  return out;
}

size_t CountOccurrences(absl::string_view text, absl::string_view needle) {
  size_t count = 0;
  for (size_t pos = text.find(needle); pos != absl::string_view::npos;
       pos = text.find(needle, pos + needle.size())) {
    ++count;
  }
  return count;
}

TEST(KinetoReaderRealTraces, ReadsEveryRecordedTorchTrace) {
  std::vector<std::string> paths;
  for (const auto& entry :
       std::filesystem::directory_iterator(GPUIDLE_TEST_DATA_DIR "/traces/torch")) {
    if (absl::EndsWith(entry.path().string(), ".json.gz")) paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());
  ASSERT_GE(paths.size(), 6u);  // the single-GPU recordings of record.log, and more
  for (const std::string& path : paths) {
    SCOPED_TRACE(path);
    absl::StatusOr<Timeline> read = ReadTraceFile(path);
    ASSERT_TRUE(read.ok()) << read.status();
    const Timeline& t = *read;
    EXPECT_EQ(t.info.source, "pytorch-profiler");
    // Recorded on H200s (record.log, record_multi.log): every visible device is one.
    ASSERT_FALSE(t.info.visible_devices.empty());
    EXPECT_EQ(t.info.visible_devices[0], 0);
    for (const std::string& name : t.info.visible_device_names) EXPECT_EQ(name, "NVIDIA H200");
    ASSERT_THAT(t.devices, SizeIs(1));  // each process drove one GPU
    EXPECT_EQ(t.devices[0].name, "NVIDIA H200");
    EXPECT_EQ(t.info.zero_timestamp_records, 0u);

    // Counted in the text independently of the reader: Kineto writes one event per line pair,
    // always as "ph": "X", "cat": "<category>".
    const std::string text = Gunzip(path);
    int64_t kernels = 0;
    for (const DeviceOp& op : t.devices[0].ops) kernels += op.kind == OpKind::kKernel;
    EXPECT_GT(kernels, 0);
    EXPECT_EQ(static_cast<size_t>(kernels),
              CountOccurrences(text, R"("ph": "X", "cat": "kernel")"));
    EXPECT_EQ(t.calls.size(), CountOccurrences(text, R"("ph": "X", "cat": "cuda_runtime")") +
                                  CountOccurrences(text, R"("ph": "X", "cat": "cuda_driver")"));
    int steps = 0;
    for (const Range& r : t.ranges) steps += r.kind == RangeKind::kStep;
    EXPECT_EQ(steps, 12);  // tests/data/traces/torch/record.log: 12 profiled steps each

    // The baseTimeNanoseconds of these traces (2026) puts every time stamp after 2020.
    EXPECT_GT(t.devices[0].ops.front().start_ns, int64_t{1577836800} * 1'000'000'000);

    // Most kernels were launched by a call with the same correlation id that began first.
    absl::flat_hash_map<uint64_t, const HostCall*> by_correlation;
    for (const HostCall& c : t.calls) by_correlation.emplace(c.correlation_id, &c);
    int64_t joined = 0;
    for (const DeviceOp& op : t.devices[0].ops) {
      if (op.kind != OpKind::kKernel) continue;
      auto it = by_correlation.find(op.correlation_id);
      if (it != by_correlation.end() && it->second->category == CallCategory::kLaunch &&
          it->second->start_ns <= op.start_ns) {
        ++joined;
      }
    }
    EXPECT_GE(joined * 10, kernels * 9) << joined << " of " << kernels << " kernels joined";

    EXPECT_TRUE(std::is_sorted(
        t.calls.begin(), t.calls.end(),
        [](const HostCall& a, const HostCall& b) { return a.start_ns < b.start_ns; }));
  }
}

TEST(KinetoReaderRealTraces, ReadsTheRankAndDeviceOfEachNcclProcess) {
  for (int rank = 0; rank < 2; ++rank) {
    SCOPED_TRACE(rank);
    absl::StatusOr<Timeline> t = ReadTraceFile(
        absl::StrCat(GPUIDLE_TEST_DATA_DIR, "/traces/torch/nccl_straggler.rank", rank, ".json.gz"));
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->info.rank, rank);
    EXPECT_EQ(t->info.world_size, 2);
    EXPECT_THAT(t->info.visible_devices, ElementsAre(0, 1));
    ASSERT_THAT(t->devices, SizeIs(1));
    EXPECT_EQ(t->devices[0].device, rank);  // torchrun gave rank r GPU r
    int collectives = 0;
    for (const DeviceOp& op : t->devices[0].ops) collectives += op.communication;
    EXPECT_EQ(collectives, 12);  // one all-reduce per step
  }
}

TEST(KinetoReaderRealTraces, FindsTheDataLoaderRangesOfTheStarvedTrace) {
  absl::StatusOr<Timeline> t =
      ReadTraceFile(GPUIDLE_TEST_DATA_DIR "/traces/torch/dataloader_starved.json.gz");
  ASSERT_TRUE(t.ok()) << t.status();
  int data = 0;
  for (const Range& r : t->ranges) data += r.kind == RangeKind::kData;
  EXPECT_GE(data, 12);
}

TEST(KinetoReaderRealTraces, ReportsACorruptedRecordedTraceAsCorruptGzip) {
  TempDir dir;
  std::string gz = testing::ReadFileOrDie(GPUIDLE_TEST_DATA_DIR "/traces/torch/item_sync.json.gz");
  for (size_t i = gz.size() / 2; i < gz.size() / 2 + 16; ++i) gz[i] = static_cast<char>(~gz[i]);
  const std::string path = dir.Write("item_sync.json.gz", gz);
  const absl::StatusOr<Timeline> t = ReadTraceFile(path);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), StartsWith(path + ": corrupt gzip"));
}

}  // namespace
}  // namespace gpuidle::internal

namespace gpuidle::internal {
namespace {

// Every field the reader fills, as text: two timelines with equal fingerprints are equal.
std::string Fingerprint(const Timeline& t) {
  std::string s = absl::StrCat(t.info.source, "|", t.info.rank.value_or(-1), "|",
                               t.info.zero_timestamp_records, "\n");
  for (const DeviceTimeline& d : t.devices) {
    absl::StrAppend(&s, "device ", d.device, " ", d.name, "\n");
    for (const DeviceOp& op : d.ops) {
      absl::StrAppend(&s, op.start_ns, " ", op.end_ns, " ", op.correlation_id, " ", op.bytes, " ",
                      t.strings.Get(op.name), " ", op.stream, " ", static_cast<int>(op.kind), " ",
                      static_cast<int>(op.copy_kind), op.pageable, op.communication, "\n");
    }
  }
  for (const HostCall& c : t.calls) {
    absl::StrAppend(&s, c.start_ns, " ", c.end_ns, " ", c.correlation_id, " ", c.thread, " ",
                    t.strings.Get(c.name), " ", c.stream, " ", c.peer_stream, " ",
                    static_cast<int>(c.category), "\n");
  }
  for (const Range& r : t.ranges) {
    absl::StrAppend(&s, r.start_ns, " ", r.end_ns, " ", r.thread, " ", t.strings.Get(r.name), " ",
                    static_cast<int>(r.kind), "\n");
  }
  return s;
}

TEST(KinetoReaderChunks, ChunkBoundariesDoNotChangeTheTimeline) {
  // Tiny chunks put every string, number and run of white space across a chunk boundary, where
  // the fast scanners hand over to RapidJSON's generic code.
  const std::string path = GPUIDLE_TEST_DATA_DIR "/traces/torch/pageable_h2d.json.gz";
  auto read = [&](size_t chunk) {
    absl::StatusOr<std::unique_ptr<ByteSource>> source = OpenByteSource(path);
    EXPECT_TRUE(source.ok());
    absl::StatusOr<Timeline> t = ReadKinetoTrace(**source, chunk);
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? Fingerprint(*t) : std::string();
  };
  const std::string whole = read(size_t{1} << 24);
  ASSERT_GT(whole.size(), 1000u);
  for (size_t chunk : {1, 2, 3, 5, 7, 16, 17, 64, 4093}) {
    EXPECT_EQ(read(chunk), whole) << "chunk of " << chunk << " bytes";
  }
}

TEST(KinetoReaderChunks, ChunkBoundariesDoNotChangeTheError) {
  TempDir dir;
  // Truncated in the middle of a string, then of a number.
  for (const char* text : {R"({"traceEvents": [{"ph": "X", "cat": "ker)",
                           R"({"traceEvents": [{"ph": "X", "ts": 12.3)"}) {
    SCOPED_TRACE(text);
    const std::string path = dir.Write("t.json", text);
    std::string first;
    for (size_t chunk : {1, 2, 4, 1024}) {
      absl::StatusOr<std::unique_ptr<ByteSource>> source = OpenByteSource(path);
      ASSERT_TRUE(source.ok());
      absl::StatusOr<Timeline> t = ReadKinetoTrace(**source, chunk);
      ASSERT_FALSE(t.ok());
      if (first.empty()) first = std::string(t.status().message());
      EXPECT_EQ(t.status().message(), first) << "chunk of " << chunk << " bytes";
      EXPECT_THAT(std::string(t.status().message()), HasSubstr("truncated"));
    }
  }
}

}  // namespace
}  // namespace gpuidle::internal
