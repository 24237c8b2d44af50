#include "collect/record_translation.h"

#include <cupti.h>

#include <cstdint>
#include <string>
#include <vector>

#include "collect/cupti_api.h"
#include "collect/fake_cupti.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/timeline.h"

namespace gpuidle::internal {
namespace {

namespace fake = fake_cupti;

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;

// A record struct as the CUpti_Activity header CUPTI hands out.
template <typename T>
const CUpti_Activity& AsActivity(const T& record) {
  return *reinterpret_cast<const CUpti_Activity*>(static_cast<const void*>(&record));
}

constexpr CUpti_ActivityKind kRuntime = CUPTI_ACTIVITY_KIND_RUNTIME;
constexpr CUpti_ActivityKind kDriver = CUPTI_ACTIVITY_KIND_DRIVER;

class RecordTranslatorTest : public ::testing::Test {
 protected:
  template <typename T>
  void Add(const T& record) {
    translator_.Translate(AsActivity(record));
  }

  std::string Name(const Timeline& t, StringId id) { return std::string(t.strings.Get(id)); }

  // The only op of device 0.
  const DeviceOp& OnlyOp(const Timeline& t) {
    const DeviceTimeline* d = t.FindDevice(0);
    EXPECT_NE(d, nullptr);
    EXPECT_THAT(d->ops, SizeIs(1));
    return d->ops.front();
  }

  const HostCall* CallWithCorrelation(const Timeline& t, uint64_t correlation) {
    for (const HostCall& c : t.calls) {
      if (c.correlation_id == correlation) return &c;
    }
    ADD_FAILURE() << "no call with correlation id " << correlation;
    return nullptr;
  }

  RecordTranslator translator_{fake::FakeApi()};
};

TEST_F(RecordTranslatorTest, TranslatesAConcurrentKernelWithItsDemangledName) {
  Add(fake::Kernel(/*device=*/0, /*stream=*/7, 1000, 2500, "_Z4spinPfi", /*correlation=*/42));
  const Timeline t = translator_.Finish();
  const DeviceOp& op = OnlyOp(t);
  EXPECT_EQ(op.kind, OpKind::kKernel);
  EXPECT_EQ(op.start_ns, 1000);
  EXPECT_EQ(op.end_ns, 2500);
  EXPECT_EQ(op.stream, 7u);
  EXPECT_EQ(op.correlation_id, 42u);
  EXPECT_EQ(Name(t, op.name), "spin(float*, int)");
  EXPECT_FALSE(op.communication);
}

TEST_F(RecordTranslatorTest, PutsKernelsOnTheDeviceThatRanThem) {
  Add(fake::Kernel(3, 7, 1000, 2000, "_Z4spinPfi", 1));
  Add(fake::Kernel(1, 7, 1000, 2000, "_Z4spinPfi", 2));
  const Timeline t = translator_.Finish();
  ASSERT_THAT(t.devices, SizeIs(2));
  EXPECT_EQ(t.devices[0].device, 1);
  EXPECT_EQ(t.devices[1].device, 3);
  EXPECT_EQ(t.devices[0].ops[0].correlation_id, 2u);
  EXPECT_EQ(t.devices[1].ops[0].correlation_id, 1u);
}

TEST_F(RecordTranslatorTest, MarksMangledNcclKernelsAsCommunication) {
  Add(fake::Kernel(0, 7, 1000, 2000,
                   "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE",
                   1));
  const Timeline t = translator_.Finish();
  const DeviceOp& op = OnlyOp(t);
  EXPECT_EQ(Name(t, op.name),
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  EXPECT_TRUE(op.communication);
}

TEST_F(RecordTranslatorTest, MarksUnmangledNcclKernelsAsCommunication) {
  Add(fake::Kernel(0, 7, 1000, 2000, "ncclKernel_AllReduce_RING_LL_Sum_float", 1));
  const Timeline t = translator_.Finish();
  EXPECT_TRUE(OnlyOp(t).communication);
  EXPECT_EQ(Name(t, OnlyOp(t).name), "ncclKernel_AllReduce_RING_LL_Sum_float");
}

TEST_F(RecordTranslatorTest, KeepsExternCKernelNamesAsTheyAre) {
  // Names that are not C++ symbols are not demangled, even when they read as a mangled type
  // ("f" would otherwise become "float", "Ss" "std::string").
  Add(fake::Kernel(0, 1, 1000, 2000, "vector_add", 1));
  Add(fake::Kernel(0, 2, 3000, 4000, "f", 2));
  Add(fake::Kernel(0, 3, 5000, 6000, "Ss", 3));
  const Timeline t = translator_.Finish();
  ASSERT_THAT(t.devices, SizeIs(1));
  ASSERT_THAT(t.devices[0].ops, SizeIs(3));
  EXPECT_EQ(Name(t, t.devices[0].ops[0].name), "vector_add");
  EXPECT_EQ(Name(t, t.devices[0].ops[1].name), "f");
  EXPECT_EQ(Name(t, t.devices[0].ops[2].name), "Ss");
}

TEST_F(RecordTranslatorTest, GivesAKernelWithoutANameTheEmptyName) {
  Add(fake::Kernel(0, 1, 1000, 2000, nullptr, 1));
  const Timeline t = translator_.Finish();
  EXPECT_EQ(OnlyOp(t).name, StringTable::kEmpty);
}

TEST_F(RecordTranslatorTest, TranslatesAPageableHostToDeviceCopy) {
  Add(fake::Memcpy(0, 7, 1000, 5000, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD,
                   CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                   /*bytes=*/1 << 20, /*correlation=*/9));
  const Timeline t = translator_.Finish();
  const DeviceOp& op = OnlyOp(t);
  EXPECT_EQ(op.kind, OpKind::kMemcpy);
  EXPECT_EQ(op.copy_kind, CopyKind::kHtoD);
  EXPECT_TRUE(op.pageable);
  EXPECT_EQ(op.bytes, uint64_t{1} << 20);
  EXPECT_EQ(op.stream, 7u);
  EXPECT_EQ(op.correlation_id, 9u);
  EXPECT_EQ(Name(t, op.name), "Memcpy HtoD (Pageable -> Device)");
}

TEST_F(RecordTranslatorTest, TranslatesAPinnedDeviceToHostCopy) {
  Add(fake::Memcpy(0, 7, 1000, 5000, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH,
                   CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, CUPTI_ACTIVITY_MEMORY_KIND_PINNED, 4, 9));
  const Timeline t = translator_.Finish();
  const DeviceOp& op = OnlyOp(t);
  EXPECT_EQ(op.copy_kind, CopyKind::kDtoH);
  EXPECT_FALSE(op.pageable);
  EXPECT_EQ(op.bytes, 4u);
  EXPECT_EQ(Name(t, op.name), "Memcpy DtoH (Device -> Pinned)");
}

TEST_F(RecordTranslatorTest, TranslatesAPeerCopy) {
  CUpti_ActivityMemcpyPtoP4 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  m.deviceId = 0;
  m.srcDeviceId = 0;
  m.dstDeviceId = 1;
  m.streamId = 5;
  m.start = 100;
  m.end = 300;
  m.bytes = 64;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.correlationId = 3;
  Add(m);
  const Timeline t = translator_.Finish();
  const DeviceOp& op = OnlyOp(t);
  EXPECT_EQ(op.kind, OpKind::kMemcpy);
  EXPECT_EQ(op.copy_kind, CopyKind::kPeer);
  EXPECT_EQ(op.bytes, 64u);
  EXPECT_EQ(Name(t, op.name), "Memcpy PtoP (Device -> Device)");
}

TEST_F(RecordTranslatorTest, TranslatesAMemset) {
  Add(fake::Memset(0, 7, 1000, 1200, /*bytes=*/4096, /*correlation=*/11));
  const Timeline t = translator_.Finish();
  const DeviceOp& op = OnlyOp(t);
  EXPECT_EQ(op.kind, OpKind::kMemset);
  EXPECT_EQ(op.bytes, 4096u);
  EXPECT_EQ(op.stream, 7u);
  EXPECT_EQ(op.correlation_id, 11u);
  EXPECT_EQ(Name(t, op.name), "Memset");
}

TEST_F(RecordTranslatorTest, NamesRuntimeCallsWithoutTheirVersionSuffix) {
  Add(fake::Api(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1000, 1500,
                /*thread=*/77, /*correlation=*/5));
  Add(fake::Api(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 2000, 9000, 77, 6));
  const Timeline t = translator_.Finish();
  ASSERT_THAT(t.calls, SizeIs(2));
  EXPECT_EQ(Name(t, t.calls[0].name), "cudaLaunchKernel");
  EXPECT_EQ(t.calls[0].category, CallCategory::kLaunch);
  EXPECT_EQ(t.calls[0].start_ns, 1000);
  EXPECT_EQ(t.calls[0].end_ns, 1500);
  EXPECT_EQ(t.calls[0].thread, 77u);
  EXPECT_EQ(t.calls[0].correlation_id, 5u);
  EXPECT_EQ(Name(t, t.calls[1].name), "cudaStreamSynchronize");
  EXPECT_EQ(t.calls[1].category, CallCategory::kSync);
}

TEST_F(RecordTranslatorTest, NamesDriverCallsFromTheDriverDomain) {
  // cuStreamSynchronize's driver id is a different runtime call's id: the domain matters.
  Add(fake::Api(kDriver, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 1000, 1500, 77, 5));
  Add(fake::Api(kDriver, CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize, 2000, 3000, 77, 6));
  const Timeline t = translator_.Finish();
  ASSERT_THAT(t.calls, SizeIs(2));
  EXPECT_EQ(Name(t, t.calls[0].name), "cuLaunchKernelEx");
  EXPECT_EQ(t.calls[0].category, CallCategory::kLaunch);
  EXPECT_EQ(Name(t, t.calls[1].name), "cuStreamSynchronize");
  EXPECT_EQ(t.calls[1].category, CallCategory::kSync);
}

TEST_F(RecordTranslatorTest, DropsCallsTheAnalysisHasNoUseFor) {
  // Traced only if CUPTI traces more than asked (whole RUNTIME/DRIVER kinds).
  Add(fake::Api(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, 1000, 1010, 77, 5));
  Add(fake::Api(kDriver, CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent, 2000, 2010, 77, 6));
  Add(fake::Api(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 3000, 3100, 77, 7));
  EXPECT_EQ(translator_.records(), 3u);
  const Timeline t = translator_.Finish();
  ASSERT_THAT(t.calls, SizeIs(1));
  EXPECT_EQ(Name(t, t.calls[0].name), "cudaLaunchKernel");
}

TEST_F(RecordTranslatorTest, DropsCallsCuptiCannotName) {
  Add(fake::Api(kRuntime, 9999, 1000, 1500, 77, 5));
  Add(fake::Api(kDriver, 9998, 2000, 2500, 77, 6));
  EXPECT_THAT(translator_.Finish().calls, IsEmpty());

  CuptiApi without_names;  // no GetCallbackName at all
  RecordTranslator translator(without_names);
  const auto call =
      fake::Api(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1, 2, 3, 4);
  translator.Translate(AsActivity(call));
  EXPECT_EQ(translator.records(), 1u);
  EXPECT_THAT(translator.Finish().calls, IsEmpty());
}

TEST_F(RecordTranslatorTest, GivesAStreamSynchronizeItsStream) {
  Add(fake::Api(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 2000, 9000, 77,
                /*correlation=*/6));
  Add(fake::Sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, /*stream=*/13,
                 /*event=*/0, 2000, 9000, /*correlation=*/6));
  const Timeline t = translator_.Finish();
  const HostCall* sync = CallWithCorrelation(t, 6);
  ASSERT_NE(sync, nullptr);
  EXPECT_EQ(sync->stream, 13u);
  EXPECT_EQ(sync->peer_stream, kNoStream);
}

TEST_F(RecordTranslatorTest, LeavesTheStreamOfAContextSynchronizeUnknown) {
  Add(fake::Api(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 2000, 9000, 77, 6));
  Add(fake::Sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, 13, 0, 2000, 9000, 6));
  const Timeline t = translator_.Finish();
  const HostCall* sync = CallWithCorrelation(t, 6);
  ASSERT_NE(sync, nullptr);
  EXPECT_EQ(sync->stream, kNoStream);
}

TEST_F(RecordTranslatorTest, GivesAStreamWaitTheStreamWhereItsEventWasLastRecordedBefore) {
  constexpr uint32_t kEvent = 5;
  constexpr uint32_t kWaitEvent = CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020;
  // The event is recorded on stream 3 (correlation 10), waited for by stream 9 (20), recorded
  // again on stream 4 (30) and waited for again by stream 9 (40). The records come in no order.
  Add(fake::Sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, 9, kEvent, 4000, 4100, 40));
  Add(fake::Api(kRuntime, kWaitEvent, 4000, 4100, 77, 40));
  Add(fake::EventRecord(kEvent, /*stream=*/4, /*correlation=*/30));
  Add(fake::Api(kRuntime, kWaitEvent, 2000, 2100, 77, 20));
  Add(fake::Sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, 9, kEvent, 2000, 2100, 20));
  Add(fake::EventRecord(kEvent, /*stream=*/3, /*correlation=*/10));
  // Another event on another stream between them must not be confused with it.
  Add(fake::EventRecord(kEvent + 1, /*stream=*/8, /*correlation=*/15));

  const Timeline t = translator_.Finish();
  const HostCall* first = CallWithCorrelation(t, 20);
  const HostCall* second = CallWithCorrelation(t, 40);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(first->category, CallCategory::kWaitEvent);
  EXPECT_EQ(first->stream, 9u);
  EXPECT_EQ(first->peer_stream, 3u);
  EXPECT_EQ(second->stream, 9u);
  EXPECT_EQ(second->peer_stream, 4u);
}

TEST_F(RecordTranslatorTest, LeavesThePeerOfAWaitForAnEventNeverRecordedBeforeUnknown) {
  constexpr uint32_t kWaitEvent = CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020;
  Add(fake::Api(kRuntime, kWaitEvent, 2000, 2100, 77, 20));
  Add(fake::Sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, 9, /*event=*/5, 2000, 2100,
                 20));
  Add(fake::EventRecord(5, /*stream=*/3, /*correlation=*/30));  // recorded only afterwards
  const Timeline t = translator_.Finish();
  const HostCall* wait = CallWithCorrelation(t, 20);
  ASSERT_NE(wait, nullptr);
  EXPECT_EQ(wait->stream, 9u);
  EXPECT_EQ(wait->peer_stream, kNoStream);
}

TEST_F(RecordTranslatorTest, ListsVisibleDevicesWithTheirNamesAndNamesTheirTimelines) {
  Add(fake::Device(0, "NVIDIA H200", /*visible=*/true));
  Add(fake::Device(1, "hidden GPU", /*visible=*/false));
  Add(fake::Device(2, "NVIDIA H100", /*visible=*/true));
  Add(fake::Device(0, "NVIDIA H200", /*visible=*/true));  // repeated: listed once
  Add(fake::Kernel(2, 7, 1000, 2000, "_Z4spinPfi", 1));
  const Timeline t = translator_.Finish();
  EXPECT_THAT(t.info.visible_devices, ElementsAre(0, 2));
  EXPECT_THAT(t.info.visible_device_names, ElementsAre("NVIDIA H200", "NVIDIA H100"));
  ASSERT_THAT(t.devices, SizeIs(1));
  EXPECT_EQ(t.devices[0].device, 2);
  EXPECT_EQ(t.devices[0].name, "NVIDIA H100");
}

TEST_F(RecordTranslatorTest, CountsAndDropsRecordsWithoutValidTimestamps) {
  Add(fake::Kernel(0, 7, 0, 0, "_Z4spinPfi", 1));        // never timed
  Add(fake::Kernel(0, 7, 5000, 4000, "_Z4spinPfi", 2));  // ends before it starts
  Add(fake::Kernel(0, 7, 1000, 0, "_Z4spinPfi", 3));     // no end
  Add(fake::Memcpy(0, 7, 0, 100, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
                   CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 4, 4));
  Add(fake::Memset(0, 7, 200, 100, 4, 5));
  Add(fake::Api(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 0, 100, 77, 6));
  Add(fake::Kernel(0, 7, 1000, uint64_t{1} << 63, "_Z4spinPfi", 7));  // beyond int64
  Add(fake::Kernel(0, 7, 1000, 1000, "_Z4spinPfi", 8));               // zero length: valid
  const Timeline t = translator_.Finish();
  EXPECT_EQ(t.info.zero_timestamp_records, 7u);
  EXPECT_THAT(t.calls, IsEmpty());
  ASSERT_THAT(t.devices, SizeIs(1));
  ASSERT_THAT(t.devices[0].ops, SizeIs(1));
  EXPECT_EQ(t.devices[0].ops[0].correlation_id, 8u);
}

TEST_F(RecordTranslatorTest, SortsRecordsThatArriveInReverseTimeOrder) {
  for (int i = 9; i >= 0; --i) {
    Add(fake::Kernel(0, 7, 1000 + 100 * i, 1050 + 100 * i, "_Z4spinPfi", i + 1));
    Add(fake::Api(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 500 + 100 * i,
                  520 + 100 * i, 77, i + 1));
  }
  const Timeline t = translator_.Finish();
  ASSERT_THAT(t.devices, SizeIs(1));
  ASSERT_THAT(t.devices[0].ops, SizeIs(10));
  ASSERT_THAT(t.calls, SizeIs(10));
  for (size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(t.devices[0].ops[i].start_ns, 1000 + 100 * static_cast<int64_t>(i));
    EXPECT_EQ(t.calls[i].start_ns, 500 + 100 * static_cast<int64_t>(i));
  }
}

TEST_F(RecordTranslatorTest, IgnoresKindsItDoesNotCollect) {
  CUpti_ActivityMarker2 marker{};
  marker.kind = CUPTI_ACTIVITY_KIND_MARKER;
  marker.timestamp = 1000;
  Add(marker);
  const Timeline t = translator_.Finish();
  EXPECT_FALSE(t.HasActivity());
  EXPECT_EQ(t.info.zero_timestamp_records, 0u);
}

TEST_F(RecordTranslatorTest, TranslatesEveryRecordOfABuffer) {
  const fake::PackedBuffer buffer = fake::Pack({
      fake::Bytes(fake::Device(0, "NVIDIA H200", true)),
      fake::Bytes(fake::Kernel(0, 7, 3000, 4000, "_Z4spinPfi", 2)),
      fake::Bytes(
          fake::Api(kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 2500, 2600, 77, 2)),
      fake::Bytes(fake::Memcpy(0, 7, 1000, 2000, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD,
                               CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
                               CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 256, 1)),
      fake::Bytes(fake::Memset(0, 8, 5000, 5100, 64, 3)),
  });
  fake::PackedBuffer copy = buffer;
  EXPECT_EQ(translator_.TranslateBuffer(copy.data(), copy.valid_bytes), 5u);
  EXPECT_EQ(translator_.records(), 5u);

  const Timeline t = translator_.Finish();
  ASSERT_THAT(t.devices, SizeIs(1));
  EXPECT_EQ(t.devices[0].name, "NVIDIA H200");
  ASSERT_THAT(t.devices[0].ops, SizeIs(3));
  EXPECT_EQ(t.devices[0].ops[0].kind, OpKind::kMemcpy);
  EXPECT_EQ(t.devices[0].ops[1].kind, OpKind::kKernel);
  EXPECT_EQ(t.devices[0].ops[2].kind, OpKind::kMemset);
  ASSERT_THAT(t.calls, SizeIs(1));
  EXPECT_EQ(Name(t, t.calls[0].name), "cudaLaunchKernel");
}

TEST_F(RecordTranslatorTest, TranslatesAnEmptyBufferToNothing) {
  uint64_t storage[4] = {};
  EXPECT_EQ(translator_.TranslateBuffer(reinterpret_cast<uint8_t*>(storage), 0), 0u);
  EXPECT_FALSE(translator_.Finish().HasActivity());
}

TEST_F(RecordTranslatorTest, JoinsRecordsFromSeveralBuffers) {
  // A wait in one buffer, its event and call in others (CUPTI fills one buffer per stream).
  fake::PackedBuffer a = fake::Pack({fake::Bytes(
      fake::Sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, 9, 5, 2000, 2100, 20))});
  fake::PackedBuffer b = fake::Pack({fake::Bytes(fake::EventRecord(5, 3, 10))});
  fake::PackedBuffer c = fake::Pack({fake::Bytes(fake::Api(
      kRuntime, CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020, 2000, 2100, 77, 20))});
  translator_.TranslateBuffer(a.data(), a.valid_bytes);
  translator_.TranslateBuffer(b.data(), b.valid_bytes);
  translator_.TranslateBuffer(c.data(), c.valid_bytes);
  const Timeline t = translator_.Finish();
  const HostCall* wait = CallWithCorrelation(t, 20);
  ASSERT_NE(wait, nullptr);
  EXPECT_EQ(wait->stream, 9u);
  EXPECT_EQ(wait->peer_stream, 3u);
}

TEST_F(RecordTranslatorTest, IsEmptyAfterFinish) {
  Add(fake::Kernel(0, 7, 1000, 2000, "_Z4spinPfi", 1));
  Add(fake::Kernel(0, 7, 0, 0, "_Z4spinPfi", 2));
  Add(fake::Device(0, "NVIDIA H200", true));
  EXPECT_EQ(translator_.records(), 3u);
  const Timeline first = translator_.Finish();
  EXPECT_TRUE(first.HasActivity());
  EXPECT_EQ(translator_.records(), 0u);

  const Timeline second = translator_.Finish();
  EXPECT_FALSE(second.HasActivity());
  EXPECT_EQ(second.info.zero_timestamp_records, 0u);
  EXPECT_THAT(second.info.visible_devices, IsEmpty());

  // Names interned before Finish are not reused by ids into the old string table.
  Add(fake::Kernel(0, 7, 1000, 2000, "_Z4spinPfi", 3));
  const Timeline third = translator_.Finish();
  EXPECT_EQ(Name(third, OnlyOp(third).name), "spin(float*, int)");
}

}  // namespace
}  // namespace gpuidle::internal
