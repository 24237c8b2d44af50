// The reader's key tables, and the trace vocabulary they share with the gpuidle trace writer:
// what the writer emits is what the reader keeps.
#include "ingest/trace_keys.h"

#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/trace_names.h"
#include "rapidjson/document.h"
#include "report/trace_writer.h"
#include "testing/timeline_builder.h"

namespace gpuidle::internal::kineto {
namespace {

using ::gpuidle::testing::TimelineBuilder;

TEST(TraceKeys, EventFieldsAreTheChromeTraceKeys) {
  EXPECT_EQ(EventField("ph"), Field::kPh);
  EXPECT_EQ(EventField("cat"), Field::kCat);
  EXPECT_EQ(EventField("name"), Field::kName);
  EXPECT_EQ(EventField("pid"), Field::kPid);
  EXPECT_EQ(EventField("tid"), Field::kTid);
  EXPECT_EQ(EventField("ts"), Field::kTs);
  EXPECT_EQ(EventField("dur"), Field::kDur);
  EXPECT_EQ(EventField("args"), Field::kArgs);
  EXPECT_EQ(EventField("id"), Field::kIgnored);
  EXPECT_EQ(EventField("TS"), Field::kIgnored);  // keys match exactly
  EXPECT_EQ(EventField(""), Field::kIgnored);
}

TEST(TraceKeys, ArgsOutsideTheVocabularyAreIgnored) {
  EXPECT_EQ(ArgField("correlation"), Field::kCorrelation);
  EXPECT_EQ(ArgField("wait_on_cuda_event_record_corr_id"), Field::kWaitOnRecordCorrelation);
  EXPECT_EQ(ArgField("External id"), Field::kExternalId);
  EXPECT_EQ(ArgField("Collective name"), Field::kCollectiveName);
  EXPECT_EQ(ArgField("Sequence number"), Field::kIgnored);  // autograd's, not the collective's
  EXPECT_EQ(ArgField("Process Group Description"), Field::kIgnored);
  EXPECT_EQ(ArgField("grid"), Field::kIgnored);
  EXPECT_EQ(ArgField("streams"), Field::kIgnored);  // a known key's length plus one
  EXPECT_EQ(ArgField("device "), Field::kIgnored);
}

// Every field's name, as warnings print it, looks up to that field again.
TEST(TraceKeys, EveryFieldNameLooksUpToItsField) {
  for (int i = 1; i < kFieldCount; ++i) {
    const Field f = static_cast<Field>(i);
    const std::string name = FieldName(f);
    if (f == Field::kCounter) {
      // One field for every GPU counter name (model/throughput_metrics.h), found by the handler.
      EXPECT_EQ(ArgField(name.substr(5)), Field::kIgnored) << name;
    } else if (name.rfind("args.", 0) == 0) {
      EXPECT_EQ(ArgField(name.substr(5)), f) << name;
    } else {
      EXPECT_EQ(EventField(name), f) << name;
    }
  }
  EXPECT_EQ(FieldName(Field::kIgnored), "?");
}

TEST(TraceKeys, CategoriesMatchEveryGenerationInAnyCase) {
  EXPECT_EQ(CategoryOf("kernel"), EventCategory::kKernel);
  EXPECT_EQ(CategoryOf("Kernel"), EventCategory::kKernel);
  EXPECT_EQ(CategoryOf("gpu_memcpy"), EventCategory::kMemcpy);
  EXPECT_EQ(CategoryOf("Memcpy"), EventCategory::kMemcpy);
  EXPECT_EQ(CategoryOf("GPU_MEMSET"), EventCategory::kMemset);
  EXPECT_EQ(CategoryOf("Runtime"), EventCategory::kRuntime);
  EXPECT_EQ(CategoryOf("cuda_driver"), EventCategory::kRuntime);
  EXPECT_EQ(CategoryOf("Driver"), EventCategory::kRuntime);
  EXPECT_EQ(CategoryOf("Operator"), EventCategory::kCpuOp);
  EXPECT_EQ(CategoryOf("Python"), EventCategory::kPythonFunction);
  EXPECT_EQ(CategoryOf("cuda_profiler_range"), EventCategory::kProfilerRange);
  EXPECT_EQ(CategoryOf("gpuidle_host_sample"), EventCategory::kHostSample);
  EXPECT_EQ(CategoryOf("gpu_user_annotation"), EventCategory::kIgnored);
  EXPECT_EQ(CategoryOf("ac2g"), EventCategory::kIgnored);
  EXPECT_EQ(CategoryOf(kGapCategory), EventCategory::kIgnored);  // drawn gaps are not read
}

TEST(TraceKeys, EveryCategoryLabelIsACategoryOfItsOwn) {
  for (int i = 1; i <= static_cast<int>(EventCategory::kHostSample); ++i) {
    const EventCategory c = static_cast<EventCategory>(i);
    EXPECT_EQ(CategoryOf(CategoryLabel(c)), c) << CategoryLabel(c);
  }
  EXPECT_EQ(CategoryLabel(EventCategory::kIgnored), "");
}

TEST(TraceKeys, FieldsUsedAreWhatEachCategoryReads) {
  EXPECT_NE(FieldsUsed(EventCategory::kKernel) & Bit(Field::kDevice), 0u);
  EXPECT_EQ(FieldsUsed(EventCategory::kRuntime) & Bit(Field::kDevice), 0u);
  EXPECT_NE(FieldsUsed(EventCategory::kRuntime) & Bit(Field::kGpuidleCategory), 0u);
  EXPECT_EQ(FieldsUsed(EventCategory::kCudaSync) & Bit(Field::kTs), 0u);  // untimed
  EXPECT_NE(FieldsUsed(EventCategory::kHostSample) & Bit(Field::kStack), 0u);
  EXPECT_EQ(FieldsUsed(EventCategory::kHostSample) & Bit(Field::kDur), 0u);  // instants
  EXPECT_EQ(FieldsUsed(EventCategory::kIgnored), 0u);
}

TEST(TraceKeys, TopAndGpuidleKeys) {
  EXPECT_EQ(TopKeyOf("traceEvents"), Top::kTraceEvents);
  EXPECT_EQ(TopKeyOf("deviceProperties"), Top::kDeviceProperties);
  EXPECT_EQ(TopKeyOf("distributedInfo"), Top::kDistributedInfo);
  EXPECT_EQ(TopKeyOf("baseTimeNanoseconds"), Top::kBaseTime);
  EXPECT_EQ(TopKeyOf("gpuidle"), Top::kGpuidle);
  EXPECT_EQ(TopKeyOf("schemaVersion"), Top::kNone);
  for (int i = 1; i <= static_cast<int>(GpuidleKey::kGpuThroughputUnavailable); ++i) {
    const GpuidleKey k = static_cast<GpuidleKey>(i);
    EXPECT_EQ(GpuidleKeyOf(GpuidleKeyName(k)), k) << GpuidleKeyName(k);
  }
  EXPECT_EQ(GpuidleKeyOf("version"), GpuidleKey::kIgnored);
}

// The writer's side of the vocabulary: every category and arg key of the events it writes
// (but for drawn gaps, flow arrows and Chrome's metadata events, which carry nothing to read
// back) is one that the reader keeps, and every top-level key and "gpuidle" key but the
// informational "version" and "schemaVersion" too.
TEST(TraceKeys, EverythingTheTraceWriterEmitsIsKeptByTheReader) {
  // clang-format off
  TimelineBuilder b;
  b.Rank(1).Visible(0)
   .Step(1, 0, 1000, "ProfilerStep#1").Data(1, 10, 20).Op(1, 20, 900, "aten::mm")
   .Range(1, 21, 899, RangeKind::kPython, "train.py(3): step")
   .Launch(1, 30, 35).Kernel(40, 100)
   .CopyCall(1, 100, 110).Copy(110, 120, CopyKind::kHtoD, /*pageable=*/true)
   .Memset(120, 130).NcclKernel(130, 140)
   .Sync(1, 140, 200).WaitEvent(1, 200, 210, 7, 8)
   .OtherCall(1, 210, 220, "cuDeviceGetCount")
   .Sample(0x1'0000'0000ull, 300, "train.py:3 step");
  // clang-format on
  Timeline t = b.Build();
  t.calls.back().category = CallCategory::kInit;  // a category that its name does not imply
  for (DeviceOp& op : t.devices[0].ops) {         // the NCCL kernel's collective args
    if (!op.communication) continue;
    op.collective = static_cast<uint32_t>(t.collectives.size());
    t.collectives.push_back(
        CollectiveArgs{t.strings.Intern("0"), t.strings.Intern("allreduce"), 3, 1024});
  }
  // Device readings: their keys in "gpuidle", and the counter events that draw them.
  GpuMetricSample reading;
  reading.time_ns = 50;
  reading.sm_clock_mhz = 1980;
  t.gpu_metrics.push_back(reading);
  t.gpu_processes.push_back(GpuProcessSeen{0, 4242, 1024, 50, 60, {55}});
  GpuThroughputSample pm;
  pm.start_ns = 40;
  pm.end_ns = 60;
  pm.sm_active_pct = 90;
  t.gpu_throughput.push_back(pm);
  t.info.gpu_throughput_unavailable = "device 1: not supported";
  const std::string json = FormatGpuidleTrace(t);
  rapidjson::Document doc;
  doc.Parse(json.c_str(), json.size());
  ASSERT_FALSE(doc.HasParseError());

  for (auto it = doc.MemberBegin(); it != doc.MemberEnd(); ++it) {
    const absl::string_view key(it->name.GetString(), it->name.GetStringLength());
    if (key != "schemaVersion") EXPECT_NE(TopKeyOf(key), Top::kNone) << key;
  }
  for (auto it = doc["gpuidle"].MemberBegin(); it != doc["gpuidle"].MemberEnd(); ++it) {
    const absl::string_view key(it->name.GetString(), it->name.GetStringLength());
    if (key != "version") EXPECT_NE(GpuidleKeyOf(key), GpuidleKey::kIgnored) << key;
  }
  std::set<EventCategory> categories;
  std::set<Field> args;
  bool flows_seen = false;
  bool counters_seen = false;
  for (const rapidjson::Value& e : doc["traceEvents"].GetArray()) {
    // Flow arrows are drawn, not read: the reader ignores their category ("id", "bp" too).
    if (e.HasMember("cat") && absl::string_view(e["cat"].GetString()) == kFlowCategory) {
      EXPECT_EQ(CategoryOf(kFlowCategory), EventCategory::kIgnored);
      flows_seen = true;
      continue;
    }
    for (auto it = e.MemberBegin(); it != e.MemberEnd(); ++it) {
      const absl::string_view key(it->name.GetString(), it->name.GetStringLength());
      if (key != "s" && key != "cname") EXPECT_NE(EventField(key), Field::kIgnored) << key;
    }
    if (absl::string_view(e["ph"].GetString()) == "M") continue;
    const absl::string_view cat = e["cat"].GetString();
    if (cat == kGapCategory) continue;
    // Counters draw the readings that the "gpuidle" object carries: the reader ignores them.
    if (cat == kCounterCategory) {
      EXPECT_EQ(CategoryOf(kCounterCategory), EventCategory::kIgnored);
      counters_seen = true;
      continue;
    }
    const EventCategory c = CategoryOf(cat);
    EXPECT_NE(c, EventCategory::kIgnored) << cat;
    categories.insert(c);
    if (!e.HasMember("args")) continue;
    for (auto it = e["args"].MemberBegin(); it != e["args"].MemberEnd(); ++it) {
      const absl::string_view key(it->name.GetString(), it->name.GetStringLength());
      const Field f = ArgField(key);
      EXPECT_NE(f, Field::kIgnored) << key;
      EXPECT_NE(FieldsUsed(c) & Bit(f), 0u) << key << " of a " << cat << " event";
      args.insert(f);
    }
  }
  EXPECT_TRUE(flows_seen);
  EXPECT_TRUE(counters_seen);
  EXPECT_EQ(categories,
            (std::set<EventCategory>{EventCategory::kKernel, EventCategory::kMemcpy,
                                     EventCategory::kMemset, EventCategory::kRuntime,
                                     EventCategory::kCpuOp, EventCategory::kUserAnnotation,
                                     EventCategory::kPythonFunction, EventCategory::kHostSample}));
  for (Field f :
       {Field::kDevice, Field::kStream, Field::kCorrelation, Field::kBytes, Field::kWaitOnStream,
        Field::kStack, Field::kGpuidleThread, Field::kGpuidleCategory, Field::kCollectiveName,
        Field::kGroupName, Field::kSeq, Field::kInNelems, Field::kOutNelems, Field::kDtype}) {
    EXPECT_TRUE(args.contains(f)) << FieldName(f);
  }
}

}  // namespace
}  // namespace gpuidle::internal::kineto
