// Replays the PyTorch-profiler traces recorded on an H200 (examples/python/*.py, see
// docs/VALIDATION.md) and checks that each is given its known cause.
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gpuidle/analyze.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "testing/temp_dir.h"

namespace gpuidle {
namespace {

std::string TracePath(const std::string& scenario) {
  return std::string(GPUIDLE_TEST_DATA_DIR) + "/traces/torch/" + scenario + ".json.gz";
}

Report MustAnalyze(const std::string& scenario) {
  absl::StatusOr<Report> r = AnalyzeTraceFiles({TracePath(scenario)});
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *std::move(r) : Report{};
}

double Share(const IdleBreakdown& idle, Cause c) {
  return static_cast<double>(idle.CauseNs(c)) / static_cast<double>(idle.TotalNs());
}
double Share(const IdleBreakdown& idle, Subcause s) {
  return static_cast<double>(idle[s]) / static_cast<double>(idle.TotalNs());
}

struct Expectation {
  std::string scenario;
  Cause cause;
  Subcause subcause;
};

class PureScenario : public ::testing::TestWithParam<Expectation> {};

TEST_P(PureScenario, PutsAtLeast80PercentOfIdleTimeInTheIntendedCause) {
  const Expectation& e = GetParam();
  const Report r = MustAnalyze(e.scenario);
  ASSERT_EQ(r.devices.size(), 1u);
  const DeviceReport& d = r.devices[0];
  EXPECT_EQ(d.name, "NVIDIA H200");
  // The profiled steps are the steady state: start-up and wind-down are the few hundred us
  // before the first and after the last ProfilerStep.
  EXPECT_EQ(r.step_source, "ProfilerStep");
  EXPECT_EQ(d.busy_ns + d.idle_ns + d.SteadyOneOffNs(), d.PhaseNs(Phase::kSteady));
  EXPECT_LT(d.PhaseNs(Phase::kStartUp) + d.PhaseNs(Phase::kWindDown), d.window_ns / 100);
  EXPECT_EQ(d.idle.TotalNs(), d.idle_ns);
  EXPECT_GE(Share(d.idle, e.cause), 0.80) << CauseName(e.cause);
  EXPECT_GE(Share(d.idle, e.subcause), 0.80) << QualifiedSubcauseName(e.subcause);
  ASSERT_FALSE(r.advice.empty());
  EXPECT_EQ(CauseOf(r.advice[0].subcause), e.cause);
  // Every profiled step is dominated by the same cause.
  ASSERT_EQ(r.steps.size(), 12u);
  for (const StepReport& s : r.steps) EXPECT_EQ(CauseOf(s.idle.Dominant()), e.cause) << s.name;
}

INSTANTIATE_TEST_SUITE_P(
    RecordedOnH200, PureScenario,
    ::testing::Values(Expectation{"dataloader_starved", Cause::kDataStarved, Subcause::kDataLoader},
                      Expectation{"tiny_mlp_launch_bound", Cause::kLaunchBound,
                                  Subcause::kLaunchOverhead},
                      Expectation{"item_sync", Cause::kSyncBound, Subcause::kHostSync},
                      Expectation{"pageable_h2d", Cause::kDataStarved, Subcause::kH2DCopy}),
    [](const ::testing::TestParamInfo<Expectation>& p) { return p.param.scenario; });

TEST(RecordedOnH200, HealthyMatmulLoopIsIdleLessThan3Percent) {
  const Report r = MustAnalyze("healthy_matmul");
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_LT(static_cast<double>(r.devices[0].idle_ns) / static_cast<double>(r.devices[0].window_ns),
            0.03);
}

TEST(RecordedOnH200, HealthyMatmulLoopHasNothingWorthFixing) {
  const Report r = MustAnalyze("healthy_matmul");
  ASSERT_TRUE(r.verdict.has_value());
  EXPECT_FALSE(r.verdict->worth_fixing);
  EXPECT_LT(r.verdict->LostShare(), 0.01);
  EXPECT_TRUE(r.advice.empty());
  EXPECT_THAT(*FormatReport(r, "text"), ::testing::HasSubstr("nothing worth fixing here"));
  // Every other scenario is worth fixing.
  for (const char* scenario : {"dataloader_starved", "item_sync", "pageable_h2d",
                               "tiny_mlp_launch_bound", "mixed_resnet"}) {
    const Report sick = MustAnalyze(scenario);
    ASSERT_TRUE(sick.verdict.has_value()) << scenario;
    EXPECT_TRUE(sick.verdict->worth_fixing) << scenario;
    EXPECT_FALSE(sick.advice.empty()) << scenario;
  }
}

TEST(RecordedOnH200, ItemSyncNamesTheItemCallAndItsPythonFunction) {
  const Report r = MustAnalyze("item_sync");
  ASSERT_FALSE(r.offenders.empty());
  EXPECT_EQ(r.offenders[0].subcause, Subcause::kHostSync);
  EXPECT_EQ(r.offenders[0].what, "cudaStreamSynchronize");
  EXPECT_THAT(r.offenders[0].site, ::testing::HasSubstr("aten::item"));
  EXPECT_THAT(r.offenders[0].site, ::testing::HasSubstr("item_sync.py"));
  EXPECT_EQ(r.offenders[0].count, 12);
  // torch.profiler names line 21 of the recorded script, `def step():`, not the .item() inside
  // it. The site says the function and where it starts, never "item_sync.py:21" as the call's.
  EXPECT_THAT(r.offenders[0].site, ::testing::EndsWith("step() in item_sync.py (def at line 21)"));
  ASSERT_FALSE(r.advice.empty());
  EXPECT_THAT(r.advice[0].fix, ::testing::HasSubstr("(def at line 21)"));
  EXPECT_THAT(r.advice[0].fix, ::testing::Not(::testing::HasSubstr("item_sync.py(21)")));
}

TEST(RecordedOnH200, MixedResnetIsPartlyDataStarvedAndPartlyLaunchBound) {
  const Report r = MustAnalyze("mixed_resnet");
  ASSERT_EQ(r.devices.size(), 1u);
  const IdleBreakdown& idle = r.devices[0].idle;
  EXPECT_GE(Share(idle, Cause::kDataStarved), 0.30);
  EXPECT_GE(Share(idle, Cause::kLaunchBound), 0.30);
  EXPECT_GE(Share(idle, Cause::kDataStarved) + Share(idle, Cause::kLaunchBound), 0.95);
}

// The same trace as if torch.profiler had recorded it without step(): no ProfilerStep ranges.
// PyTorch's own Optimizer.step annotations then make the steps, and the answer stays the same.
TEST(RecordedOnH200, WithoutProfilerStepsTheOptimizerStepsAreTheSteps) {
  const Report with_steps = MustAnalyze("mixed_resnet");
  std::string json = testing::Gunzip(testing::ReadFileOrDie(TracePath("mixed_resnet")));
  ASSERT_TRUE(absl::StrContains(json, "\"ProfilerStep#"));
  absl::StrReplaceAll({{"\"ProfilerStep#", "\"Annotated#"}}, &json);
  testing::TempDir dir;
  absl::StatusOr<Report> r = AnalyzeTraceFiles({dir.Write("no_steps.json", json)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->step_source, "optimizer.step");
  ASSERT_EQ(r->devices.size(), 1u);
  EXPECT_GE(r->devices[0].step_count, 8);
  const IdleBreakdown& idle = r->devices[0].idle;
  EXPECT_GE(Share(idle, Cause::kDataStarved), 0.30);
  EXPECT_GE(Share(idle, Cause::kLaunchBound), 0.30);
  EXPECT_NEAR(Share(idle, Cause::kDataStarved),
              Share(with_steps.devices[0].idle, Cause::kDataStarved), 0.10);
}

// The same trace as if its last ProfilerStep had been closed 13 s after torch.profiler stopped
// recording (a schedule that ended mid-step): the step is cut to the profiler's span, so no
// unrecorded time reads as idle, and the report says so.
TEST(RecordedOnH200, AStepThatOutlivesTheRecordingIsCutToTheProfilersSpan) {
  const Report recorded = MustAnalyze("mixed_resnet");
  rapidjson::Document doc;
  doc.Parse(testing::Gunzip(testing::ReadFileOrDie(TracePath("mixed_resnet"))).c_str());
  ASSERT_FALSE(doc.HasParseError());
  rapidjson::Value* last = nullptr;
  for (rapidjson::Value& e : doc["traceEvents"].GetArray()) {
    if (!e.IsObject() || !e.HasMember("name") || !e["name"].IsString() ||
        !absl::StartsWith(e["name"].GetString(), "ProfilerStep#") || !e.HasMember("cat") ||
        std::string(e["cat"].GetString()) != "user_annotation" || !e.HasMember("ts")) {
      continue;
    }
    if (last == nullptr || e["ts"].GetDouble() > (*last)["ts"].GetDouble()) last = &e;
  }
  ASSERT_NE(last, nullptr);
  (*last)["dur"].SetDouble((*last)["dur"].GetDouble() + 13e6);  // microseconds
  rapidjson::StringBuffer json;
  rapidjson::Writer<rapidjson::StringBuffer> writer(json);
  doc.Accept(writer);
  testing::TempDir dir;
  absl::StatusOr<Report> r = AnalyzeTraceFiles({dir.Write("late_step.json", json.GetString())});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->devices.size(), 1u);
  EXPECT_LE(r->window_end_ns - r->window_start_ns,
            recorded.window_end_ns - recorded.window_start_ns + 1'000'000);
  EXPECT_LE(r->devices[0].idle_ns, recorded.devices[0].idle_ns * 11 / 10);
  EXPECT_THAT(r->warnings, ::testing::Contains(
                               ::testing::HasSubstr("ran outside the profiler's recorded span")));
}

TEST(RecordedOnTwoH200s, FindsTheStragglerAndThePeerWaitingForIt) {
  absl::StatusOr<Report> r =
      AnalyzeTraceFiles({TracePath("nccl_straggler.rank0"), TracePath("nccl_straggler.rank1")});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->devices.size(), 2u);
  const DeviceReport& punctual = r->devices[0];
  const DeviceReport& straggler = r->devices[1];
  EXPECT_EQ(punctual.rank, 0);  // from distributedInfo
  EXPECT_EQ(straggler.rank, 1);
  EXPECT_EQ(straggler.device, 1);
  // Rank 0's all-reduce kernels spin while rank 1 does 30 ms of host work per step.
  ASSERT_TRUE(punctual.comm_wait_ns.has_value());
  EXPECT_GT(*punctual.comm_wait_ns, 0.9 * static_cast<double>(punctual.comm_ns));
  EXPECT_GT(punctual.comm_ns, punctual.window_ns / 2);
  EXPECT_LT(*straggler.comm_wait_ns, *punctual.comm_wait_ns / 50);
  EXPECT_GE(Share(straggler.idle, Subcause::kHost), 0.80);
  // Both lost-time causes are named, the peer wait first or second.
  ASSERT_GE(r->advice.size(), 2u);
  std::vector<Subcause> top = {r->advice[0].subcause, r->advice[1].subcause};
  EXPECT_THAT(top, ::testing::UnorderedElementsAre(Subcause::kCommWait, Subcause::kHost));
  EXPECT_EQ(r->visible_device_count, 2);
  EXPECT_TRUE(r->unused_devices.empty());
  // The straggler is named, with its own cause: the reason it was late.
  EXPECT_EQ(r->straggler_rank, 1);
  ASSERT_EQ(r->ranks.size(), 2u);
  const RankReport& late = r->ranks[1];
  EXPECT_EQ(late.rank, 1);
  EXPECT_GE(late.arrived_last, 10);  // of 12 all-reduces (the first step's come together)
  EXPECT_EQ(late.matched, 12);
  EXPECT_GT(late.late_ns / late.arrived_last, 20'000'000);
  ASSERT_TRUE(late.own_cause.has_value());
  EXPECT_EQ(CauseOf(*late.own_cause), Cause::kDataStarved);
  EXPECT_EQ(r->clock.method, "one clock");
  EXPECT_DOUBLE_EQ(r->clock.matched_share, 1.0);
  // Per collective kind: one, the trace's own name and size of it.
  ASSERT_EQ(punctual.collectives.size(), 1u);
  EXPECT_EQ(punctual.collectives[0].op, "allreduce");
  EXPECT_EQ(punctual.collectives[0].group, "0");
  EXPECT_EQ(punctual.collectives[0].count, 12);
  EXPECT_EQ(punctual.collectives[0].bytes, int64_t{12} * 16777216 * 4);
  EXPECT_EQ(punctual.collectives[0].wait_ns, punctual.comm_wait_ns);
  // The advice on the waits names the straggler and its own cause.
  EXPECT_THAT(r->advice[0].subcause == Subcause::kCommWait ? r->advice[0].fix : r->advice[1].fix,
              ::testing::HasSubstr("rank 1, the straggler"));
}

TEST(RecordedOnTwoH200s, ReportsTheGpuAJobLeftUnused) {
  const Report r = MustAnalyze("one_of_two_gpus");
  EXPECT_EQ(r.visible_device_count, 2);
  EXPECT_THAT(r.unused_devices, ::testing::ElementsAre(1));
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_LT(static_cast<double>(r.devices[0].idle_ns) / static_cast<double>(r.devices[0].window_ns),
            0.03);
}

TEST(RecordedOnH200, AnalysingTwiceGivesTheSameReport) {
  for (const char* scenario : {"item_sync", "mixed_resnet"}) {
    const Report a = MustAnalyze(scenario);
    const Report b = MustAnalyze(scenario);
    EXPECT_EQ(*FormatReport(a, "json"), *FormatReport(b, "json")) << scenario;
  }
}

}  // namespace
}  // namespace gpuidle
