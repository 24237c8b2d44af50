// The event mapping on its own: Events as the handler would finish them, into the model.
#include "ingest/event_mapper.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ingest/reader_warnings.h"

namespace gpuidle::internal::kineto {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

class EventMapperTest : public ::testing::Test {
 protected:
  // A complete event of a category, with ts and dur in microseconds.
  static Event Complete(const std::string& cat, const std::string& name, int64_t ts_us,
                        int64_t dur_us) {
    Event e;
    e.ph = "X";
    e.cat = cat;
    e.name = name;
    e.ts_ns = ts_us * 1000;
    e.dur_ns = dur_us * 1000;
    return e;
  }

  std::vector<std::string> Warnings() {
    std::vector<std::string> lines;
    AppendWarnings(warnings_, &lines);
    return lines;
  }

  Timeline t_;
  ReaderWarnings warnings_;
  EventMapper mapper_{&t_, &warnings_};
};

TEST_F(EventMapperTest, DeviceWorkGoesOnItsDevice) {
  Event kernel = Complete("kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 10, 5);
  kernel.device = 1;
  kernel.stream = 7;
  kernel.correlation = 3;
  mapper_.Map(kernel);
  Event copy = Complete("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 20, 5);
  copy.has_pid = true;
  copy.pid = 2;  // no device arg: the pid names the device
  copy.bytes = 4096;
  mapper_.Map(copy);
  ASSERT_EQ(t_.devices.size(), 2u);
  const DeviceOp& k = t_.devices[0].ops.at(0);
  EXPECT_EQ(t_.devices[0].device, 1);
  EXPECT_EQ(k.kind, OpKind::kKernel);
  EXPECT_TRUE(k.communication);  // by its name
  EXPECT_EQ(k.start_ns, 10'000);
  EXPECT_EQ(k.end_ns, 15'000);
  EXPECT_EQ(k.stream, 7u);
  EXPECT_EQ(k.correlation_id, 3u);
  const DeviceOp& c = t_.devices[1].ops.at(0);
  EXPECT_EQ(t_.devices[1].device, 2);
  EXPECT_EQ(c.kind, OpKind::kMemcpy);
  EXPECT_EQ(c.copy_kind, CopyKind::kHtoD);
  EXPECT_TRUE(c.pageable);
  EXPECT_EQ(c.bytes, 4096u);
  EXPECT_THAT(Warnings(), IsEmpty());
}

TEST_F(EventMapperTest, GpuidleArgsOverrideWhatNamesImply) {
  Event copy = Complete("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 1, 1);
  copy.copy_kind = CopyKind::kDtoD;
  copy.pageable = false;
  mapper_.Map(copy);
  Event call = Complete("cuda_runtime", "cudaLaunchKernel", 1, 1);
  call.call_category = CallCategory::kInit;
  call.tid = 5;
  call.thread = 0x1'0000'0005ull;
  mapper_.Map(call);
  Event range = Complete("user_annotation", "ProfilerStep#3", 1, 1);
  range.range_kind = RangeKind::kUser;
  mapper_.Map(range);
  ASSERT_EQ(t_.devices.size(), 1u);
  EXPECT_EQ(t_.devices[0].ops[0].copy_kind, CopyKind::kDtoD);
  EXPECT_FALSE(t_.devices[0].ops[0].pageable);
  ASSERT_EQ(t_.calls.size(), 1u);
  EXPECT_EQ(t_.calls[0].category, CallCategory::kInit);
  EXPECT_EQ(t_.calls[0].thread, 0x1'0000'0005ull);
  ASSERT_EQ(t_.ranges.size(), 1u);
  EXPECT_EQ(t_.ranges[0].kind, RangeKind::kUser);
}

TEST_F(EventMapperTest, HostRangesTakeTheirKindFromCategoryAndName) {
  mapper_.Map(Complete("cpu_op", "ProfilerStep#1", 0, 10));  // PyTorch 1.8 put steps here
  mapper_.Map(Complete("python_function", "train.py(3): step", 1, 1));
  mapper_.Map(Complete("user_annotation", "enumerate(DataLoader)#_SingleProcess", 2, 1));
  mapper_.Map(Complete("Operator", "aten::mm", 3, 1));
  ASSERT_EQ(t_.ranges.size(), 4u);
  EXPECT_EQ(t_.ranges[0].kind, RangeKind::kStep);
  EXPECT_EQ(t_.ranges[1].kind, RangeKind::kPython);
  EXPECT_EQ(t_.ranges[2].kind, RangeKind::kData);
  EXPECT_EQ(t_.ranges[3].kind, RangeKind::kFrameworkOp);
}

TEST_F(EventMapperTest, OnlyCompleteEventsAndSampleInstantsCount) {
  Event begin = Complete("kernel", "k", 1, 1);
  begin.ph = "B";
  mapper_.Map(begin);
  Event sample;
  sample.ph = "I";
  sample.cat = "gpuidle_host_sample";
  sample.ts_ns = 5000;
  sample.tid = 9;
  sample.stack = "train.py:3 step";
  mapper_.Map(sample);
  mapper_.Map(Complete("gpu_user_annotation", "copy of a range", 1, 1));
  EXPECT_THAT(t_.devices, IsEmpty());
  ASSERT_EQ(t_.samples.size(), 1u);
  EXPECT_EQ(t_.samples[0].time_ns, 5000);
  EXPECT_EQ(t_.samples[0].thread, 9u);
  EXPECT_EQ(t_.strings.Get(t_.samples[0].stack), "train.py:3 step");
}

TEST_F(EventMapperTest, RequiredFieldsCostTheEventOthersOnlyThemselves) {
  Event no_dur = Complete("kernel", "k", 1, 1);
  no_dur.dur_ns.reset();
  mapper_.Map(no_dur);
  Event negative = Complete("cuda_runtime", "cudaMemcpy", 1, -1);
  mapper_.Map(negative);
  Event bad_bytes = Complete("gpu_memset", "Memset (Device)", 1, 1);
  bad_bytes.bad = Bit(Field::kBytes);
  bad_bytes.problem[static_cast<int>(Field::kBytes)] = Problem::kNegative;
  bad_bytes.example_field = Field::kBytes;
  bad_bytes.example = "-1";
  mapper_.Map(bad_bytes);
  Event bad_tid_of_a_kernel = Complete("kernel", "k", 2, 1);  // kernels do not read tid
  bad_tid_of_a_kernel.bad = Bit(Field::kTid);
  bad_tid_of_a_kernel.problem[static_cast<int>(Field::kTid)] = Problem::kWrongType;
  mapper_.Map(bad_tid_of_a_kernel);
  ASSERT_EQ(t_.devices.size(), 1u);
  EXPECT_EQ(t_.devices[0].ops.size(), 2u);  // the memset and the last kernel
  EXPECT_THAT(t_.calls, IsEmpty());
  EXPECT_THAT(Warnings(),
              ElementsAre("skipped 1 kernel events without \"dur\"",
                          "ignored the \"args.bytes\" of 1 gpu_memset events: it is negative "
                          "(first: -1)",
                          "skipped 1 cuda_runtime events whose \"dur\" is negative"));
}

TEST_F(EventMapperTest, RecordsWithoutTimeStampsAreCountedNotAdded) {
  mapper_.Map(Complete("kernel", "k", 0, 0));
  mapper_.AddZeroTimestampRecords(2);
  EXPECT_THAT(t_.devices, IsEmpty());
  EXPECT_EQ(t_.info.zero_timestamp_records, 3u);
  mapper_.AddZeroTimestampRecords(UINT64_MAX);
  EXPECT_EQ(t_.info.zero_timestamp_records, UINT64_MAX);
  EXPECT_TRUE(warnings_.zero_timestamp_count_saturated);
}

TEST_F(EventMapperTest, StreamsBeyond32BitsFoldToStandIns) {
  Event a = Complete("kernel", "k", 1, 1);
  a.stream = int64_t{0x7f00'0000'1000};
  mapper_.Map(a);
  Event b = Complete("kernel", "k", 3, 1);
  b.stream = int64_t{0x7f00'0000'2000};
  mapper_.Map(b);
  mapper_.Map(a);
  Event none = Complete("kernel", "k", 5, 1);
  none.stream = -1;
  mapper_.Map(none);
  const std::vector<DeviceOp>& ops = t_.devices.at(0).ops;
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_NE(ops[0].stream, ops[1].stream);
  EXPECT_EQ(ops[0].stream, ops[2].stream);  // the same stand-in for the same stream
  EXPECT_GT(ops[0].stream, 0xf000'0000u);   // from the top of the range down
  EXPECT_EQ(ops[3].stream, kNoStream);
}

TEST_F(EventMapperTest, ProfilerRangesWaitForTheirPidToBeADevice) {
  Event on_device = Complete("cuda_profiler_range", "range", 1, 1);
  on_device.has_pid = true;
  on_device.pid = 3;
  mapper_.Map(on_device);
  Event nowhere = on_device;
  nowhere.pid = 4;
  mapper_.Map(nowhere);
  Event kernel = Complete("kernel", "k", 5, 1);
  kernel.has_pid = true;
  kernel.pid = 3;
  mapper_.Map(kernel);
  EXPECT_EQ(t_.devices.at(0).ops.size(), 1u);  // not placed yet
  mapper_.Finish();
  EXPECT_EQ(t_.devices.at(0).ops.size(), 2u);
  EXPECT_EQ(warnings_.unplaced_ranges, 1u);
}

TEST_F(EventMapperTest, SyncsAndEventRecordsAreKeptForTheirCalls) {
  Event sync;
  sync.ph = "X";
  sync.cat = "cuda_sync";
  sync.correlation = 11;
  sync.stream = 7;
  sync.wait_on_stream = 8;
  sync.wait_on_record_correlation = 9;
  mapper_.Map(sync);
  Event record;
  record.ph = "X";
  record.cat = "cuda_event";
  record.correlation = 9;
  record.stream = 8;
  mapper_.Map(record);
  ASSERT_EQ(mapper_.syncs().size(), 1u);
  EXPECT_EQ(mapper_.syncs()[0].correlation, 11u);
  EXPECT_EQ(mapper_.syncs()[0].stream, 7);
  EXPECT_EQ(mapper_.syncs()[0].wait_on_stream, 8);
  EXPECT_EQ(mapper_.syncs()[0].event_record_correlation, 9u);
  ASSERT_EQ(mapper_.event_records().size(), 1u);
  EXPECT_EQ(mapper_.event_records()[0].stream, 8);
}

TEST_F(EventMapperTest, DeviceNamesComeFromDeviceProperties) {
  t_.info.visible_devices = {0, 1};
  t_.info.visible_device_names = {"NVIDIA H200", "NVIDIA H100"};
  Event kernel = Complete("kernel", "k", 1, 1);
  kernel.device = 1;
  mapper_.Map(kernel);
  mapper_.Finish();
  EXPECT_EQ(t_.devices.at(0).name, "NVIDIA H100");
}

}  // namespace
}  // namespace gpuidle::internal::kineto
