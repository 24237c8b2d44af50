// The collective args of NCCL kernels (Timeline::collectives, DeviceOp::collective): read from
// the kernel itself where recent PyTorch releases put them, else from the record_param_comms
// CPU op that launched it, joined by "External id" or through the launching call.
#include <zlib.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ingest/read_trace.h"
#include "model/timeline.h"
#include "model/trace_names.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "testing/temp_dir.h"

namespace gpuidle::internal {
namespace {

using ::gpuidle::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr absl::string_view kNccl =
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";

std::string X(absl::string_view cat, absl::string_view name, absl::string_view ts,
              absl::string_view dur, absl::string_view args, absl::string_view pid = "0",
              absl::string_view tid = "7") {
  return absl::StrCat(R"({"ph": "X", "cat": ")", cat, R"(", "name": ")", name, R"(", "pid": )", pid,
                      R"(, "tid": )", tid, R"(, "ts": )", ts, R"(, "dur": )", dur, R"(, "args": )",
                      args, "}");
}

std::string Trace(const std::vector<std::string>& events, absl::string_view top = "") {
  return absl::StrCat("{", top, "\n\"traceEvents\": [\n", absl::StrJoin(events, ",\n"), "\n]}\n");
}

// An op's collective as "group/op/seq/bytes", "none" without one.
std::string Collective(const Timeline& t, const DeviceOp& op) {
  if (op.collective == kNoCollective) return "none";
  if (op.collective >= t.collectives.size()) return "index out of range";
  const CollectiveArgs& c = t.collectives[op.collective];
  return absl::StrCat(t.strings.Get(c.group), "/", t.strings.Get(c.op), "/", c.seq, "/", c.bytes);
}

// The collectives of device 0's ops, in time order.
std::vector<std::string> Collectives(const Timeline& t) {
  std::vector<std::string> out;
  for (const DeviceTimeline& d : t.devices) {
    for (const DeviceOp& op : d.ops) out.push_back(Collective(t, op));
  }
  return out;
}

class CollectiveArgsTest : public ::testing::Test {
 protected:
  Timeline ReadOk(absl::string_view contents) {
    absl::StatusOr<Timeline> t = ReadTraceFile(dir_.Write("t.json", contents));
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? std::move(t).value() : Timeline();
  }
  TempDir dir_;
};

TEST_F(CollectiveArgsTest, ANcclKernelsOwnArgsGiveGroupOpSeqAndBytes) {
  const Timeline t = ReadOk(Trace({X(
      "kernel", kNccl, "10", "5",
      R"({"device": 0, "stream": 7, "correlation": 3, "External id": 9, "Collective name": "allreduce",
          "In msg nelems": 1024, "Out msg nelems": 1024, "Group size": 2, "dtype": "BFloat16",
          "Process Group Name": "3", "Process Group Description": "tp", "Seq": 7})")}));
  EXPECT_THAT(Collectives(t), ElementsAre("3/allreduce/7/2048"));
  EXPECT_THAT(t.info.warnings, IsEmpty());
}

TEST_F(CollectiveArgsTest, BytesAreTheLargerBufferTimesTheElementSize) {
  // An all-gather's output is the whole; a reduce-scatter's input.
  const Timeline t = ReadOk(Trace({
      X("kernel", "ncclDevKernel_AllGather_RING_LL", "10", "5",
        R"({"device": 0, "Collective name": "_allgather_base", "In msg nelems": 256,
            "Out msg nelems": 1024, "dtype": "Float", "Process Group Name": "0"})"),
      X("kernel", "ncclDevKernel_ReduceScatter_Sum_f32", "20", "5",
        R"({"device": 0, "Collective name": "_reduce_scatter_base", "In msg nelems": 1024,
            "Out msg nelems": 256, "dtype": "Long", "Process Group Name": "0"})"),
      X("kernel", "ncclDevKernel_Broadcast", "30", "5",
        R"({"device": 0, "Collective name": "broadcast", "In msg nelems": 8,
            "dtype": "Float8_e4m3fn", "Process Group Name": 5})"),
      // A dtype the table does not know: the size is unknown, the rest is kept.
      X("kernel", "ncclDevKernel_SendRecv", "40", "5",
        R"({"device": 0, "Collective name": "send", "In msg nelems": 8, "dtype": "UInt4",
            "Process Group Name": "0"})"),
  }));
  EXPECT_THAT(Collectives(t),
              ElementsAre("0/_allgather_base/-1/4096", "0/_reduce_scatter_base/-1/8192",
                          "5/broadcast/-1/8", "0/send/-1/-1"));
}

TEST_F(CollectiveArgsTest, OlderTracesGiveTheArgsOfTheLaunchingRecordParamCommsByExternalId) {
  const std::string rpc = R"({"External id": 23, "Process Group Name": "1", "In msg nelems": 100,
      "Out msg nelems": 100, "dtype": "Float", "Collective name": "allreduce", "Seq": 4,
      "Sequence number": 999})";
  const Timeline t = ReadOk(Trace({
      X("cpu_op", "record_param_comms", "0", "50", rpc, "651", "651"),
      X("cuda_runtime", "cudaLaunchKernel", "10", "2", R"({"External id": 23, "correlation": 5})",
        "651", "651"),
      X("kernel", kNccl, "20", "30", R"({"device": 0, "correlation": 5, "External id": 23})"),
      // Its own "Seq" wins, the rest comes from the CPU op.
      X("kernel", kNccl, "60", "30", R"({"device": 0, "External id": 23, "Seq": 5})"),
  }));
  EXPECT_THAT(Collectives(t), ElementsAre("1/allreduce/4/400", "1/allreduce/5/400"));
  // "Sequence number" is autograd's: never taken for the collective's.
}

TEST_F(CollectiveArgsTest, WithoutAMatchingExternalIdTheLaunchInsideRecordParamCommsDecides) {
  const Timeline t = ReadOk(Trace({
      X("cpu_op", "record_param_comms", "0", "50",
        R"({"External id": 1, "Process Group Name": "0", "Collective name": "allreduce",
            "In msg nelems": 4, "dtype": "Float"})",
        "651", "651"),
      // Nested inside it, the innermost: this one launched the kernel.
      X("cpu_op", "record_param_comms", "5", "20",
        R"({"External id": 2, "Process Group Name": "0", "Collective name": "broadcast",
            "In msg nelems": 2, "dtype": "Float"})",
        "651", "651"),
      // The same time on another thread: not the launcher.
      X("cpu_op", "record_param_comms", "0", "50",
        R"({"External id": 3, "Process Group Name": "9", "Collective name": "barrier",
            "In msg nelems": 1, "dtype": "Float"})",
        "651", "652"),
      X("user_annotation", "nccl:broadcast", "6", "10", R"({"External id": 4})", "651", "651"),
      X("cuda_runtime", "cudaLaunchKernel", "8", "2", R"({"External id": 4, "correlation": 77})",
        "651", "651"),
      X("kernel", kNccl, "30", "10", R"({"device": 0, "correlation": 77, "External id": 4})"),
      // Launched after the nested one ended, inside the outer one.
      X("cuda_runtime", "cudaLaunchKernel", "30", "2", R"({"correlation": 78})", "651", "651"),
      X("kernel", kNccl, "45", "10", R"({"device": 0, "correlation": 78})"),
      // Launched outside any: none.
      X("cuda_runtime", "cudaLaunchKernel", "60", "2", R"({"correlation": 79})", "651", "651"),
      X("kernel", kNccl, "65", "10", R"({"device": 0, "correlation": 79})"),
  }));
  EXPECT_THAT(Collectives(t), ElementsAre("0/broadcast/-1/8", "0/allreduce/-1/16", "none"));
  EXPECT_EQ(t.collectives.size(), 2u);
}

TEST_F(CollectiveArgsTest, OnlyCommunicationKernelsGetCollectiveArgs) {
  const std::string rpc = R"({"External id": 8, "Process Group Name": "0",
      "Collective name": "allgather", "In msg nelems": 4, "dtype": "Float"})";
  const Timeline t = ReadOk(Trace({
      X("cpu_op", "record_param_comms", "0", "50", rpc, "651", "651"),
      // A copy kernel of the all-gather, and an op of another name with the same args.
      X("kernel", "CatArrayBatchedCopy", "10", "5", R"({"device": 0, "External id": 8})"),
      X("cpu_op", "aten::cat", "1", "2", rpc, "651", "651"),
      X("gpu_memcpy", "Memcpy DtoD (Device -> Device)", "20", "5",
        R"({"device": 0, "External id": 8, "bytes": 16})"),
      X("kernel", kNccl, "30", "5", R"({"device": 0})"),  // nothing known: none
  }));
  EXPECT_THAT(Collectives(t), ElementsAre("none", "none", "none"));
  EXPECT_THAT(t.collectives, IsEmpty());
}

TEST_F(CollectiveArgsTest, SortingTheOpsKeepsEachWithItsOwnArgs) {
  const Timeline t = ReadOk(Trace({
      X("kernel", kNccl, "90", "5",
        R"({"device": 0, "Collective name": "late", "Process Group Name": "0"})"),
      X("kernel", "gemm", "50", "5", R"({"device": 0})"),
      X("kernel", kNccl, "10", "5",
        R"({"device": 0, "Collective name": "early", "Process Group Name": "0"})"),
  }));
  EXPECT_THAT(Collectives(t), ElementsAre("0/early/-1/-1", "none", "0/late/-1/-1"));
}

TEST_F(CollectiveArgsTest, UnusableCollectiveArgsAreIgnoredWithAWarning) {
  const Timeline t =
      ReadOk(Trace({X("kernel", kNccl, "10", "5",
                      R"({"device": 0, "Collective name": 5, "In msg nelems": -3, "dtype": "Float",
          "Process Group Name": "0", "Seq": "12"})")}));
  EXPECT_THAT(Collectives(t), ElementsAre("0//12/-1"));
  EXPECT_THAT(absl::StrJoin(t.info.warnings, "\n"),
              HasSubstr("ignored the \"args.Collective name\" of 1 kernel events: it is not a "
                        "string"));
  EXPECT_THAT(absl::StrJoin(t.info.warnings, "\n"),
              HasSubstr("ignored the \"args.In msg nelems\" of 1 kernel events: it is negative"));
}

TEST_F(CollectiveArgsTest, DtypeTableKnowsPyTorchsNames) {
  EXPECT_EQ(DtypeBytes("Float"), 4);
  EXPECT_EQ(DtypeBytes("BFloat16"), 2);
  EXPECT_EQ(DtypeBytes("Half"), 2);
  EXPECT_EQ(DtypeBytes("Double"), 8);
  EXPECT_EQ(DtypeBytes("Long"), 8);
  EXPECT_EQ(DtypeBytes("ComplexDouble"), 16);
  EXPECT_EQ(DtypeBytes(kByteDtype), 1);
  EXPECT_EQ(DtypeBytes("float"), -1);  // exact spelling only
  EXPECT_EQ(DtypeBytes(""), -1);
}

TEST_F(CollectiveArgsTest, DevicePropertiesGiveUuidsAndPhysicalIndicesWhereTheyHaveThem) {
  const Timeline t = ReadOk(Trace({X("kernel", "gemm", "10", "5", R"({"device": 1})")},
                                  R"("deviceProperties": [
          {"id": 0, "name": "NVIDIA H200", "uuid": "GPU-2f9c1a7e-0b3d-4c55-9e61-7a8b9c0d1e2f",
           "gpuidle_physical_index": 3},
          {"id": 1, "name": "NVIDIA H200", "gpuidle_physical_index": "x"},
          {"id": 2, "uuid": 7, "gpuidle_physical_index": 5}],)"));
  EXPECT_THAT(t.info.visible_devices, ElementsAre(0, 1, 2));
  EXPECT_THAT(t.info.visible_device_uuids,
              ElementsAre("GPU-2f9c1a7e-0b3d-4c55-9e61-7a8b9c0d1e2f", "", ""));
  EXPECT_THAT(t.info.visible_device_physical, ElementsAre(3, -1, 5));
}

TEST_F(CollectiveArgsTest, KinetoDevicePropertiesWithoutThemLeaveBothEmpty) {
  const Timeline t = ReadOk(Trace({X("kernel", "gemm", "10", "5", R"({"device": 0})")},
                                  R"("deviceProperties": [{"id": 0, "name": "NVIDIA H200",
                                      "totalGlobalMem": 150109880320}],)"));
  EXPECT_THAT(t.info.visible_devices, ElementsAre(0));
  EXPECT_THAT(t.info.visible_device_uuids, IsEmpty());
  EXPECT_THAT(t.info.visible_device_physical, IsEmpty());
}

// --- The recorded two-rank traces: both forms (the kernel's own args, and only those of the
// record_param_comms that launched it) give the same collectives.

std::string Gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  EXPECT_NE(f, nullptr) << path;
  std::string out;
  char buffer[1 << 16];
  int n = 0;
  while (f != nullptr && (n = gzread(f, buffer, sizeof(buffer))) > 0) out.append(buffer, n);
  if (f != nullptr) gzclose(f);
  return out;
}

// The trace with the collective args taken off its kernels, as older releases wrote it.
std::string WithoutKernelCollectiveArgs(const std::string& json, int* stripped) {
  rapidjson::Document doc;
  doc.Parse(json.c_str(), json.size());
  EXPECT_FALSE(doc.HasParseError());
  for (rapidjson::Value& e : doc["traceEvents"].GetArray()) {
    if (!e.HasMember("cat") || absl::string_view(e["cat"].GetString()) != "kernel") continue;
    if (!e.HasMember("args")) continue;
    rapidjson::Value& args = e["args"];
    bool any = false;
    for (const char* key : {"Collective name", "In msg nelems", "Out msg nelems", "dtype",
                            "Process Group Name", "Seq"}) {
      any |= args.RemoveMember(key);
    }
    *stripped += any;
  }
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> writer(out);
  doc.Accept(writer);
  return std::string(out.GetString(), out.GetSize());
}

TEST_F(CollectiveArgsTest, EveryAllReduceOfTheRecordedStragglerTracesHasItsArgsInBothForms) {
  for (int rank = 0; rank < 2; ++rank) {
    SCOPED_TRACE(rank);
    const std::string path =
        absl::StrCat(GPUIDLE_TEST_DATA_DIR, "/traces/torch/nccl_straggler.rank", rank, ".json.gz");
    int stripped = 0;
    const std::string older = WithoutKernelCollectiveArgs(Gunzip(path), &stripped);
    EXPECT_EQ(stripped, 12);
    for (const std::string& name : {std::string("recent"), std::string("older")}) {
      SCOPED_TRACE(name);
      absl::StatusOr<Timeline> t =
          name == "recent" ? ReadTraceFile(path) : ReadTraceFile(dir_.Write("older.json", older));
      ASSERT_TRUE(t.ok()) << t.status();
      int communication = 0;
      for (const DeviceTimeline& d : t->devices) {
        for (const DeviceOp& op : d.ops) {
          if (!op.communication) {
            EXPECT_EQ(op.collective, kNoCollective);
            continue;
          }
          ++communication;
          EXPECT_EQ(Collective(*t, op), absl::StrCat("0/allreduce/-1/", int64_t{16777216} * 4));
        }
      }
      EXPECT_EQ(communication, 12);
      EXPECT_EQ(t->collectives.size(), 12u);
    }
  }
}

}  // namespace
}  // namespace gpuidle::internal
