// The binned timeline of each device (docs/REPORT_SCHEMA.md, "timeline") through the JSON
// writer and back through the report reader.
#include <cstdint>
#include <string>

#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gpuidle/report.h"
#include "gtest/gtest.h"
#include "ingest/report_reader.h"
#include "report/writer.h"

namespace gpuidle::internal {
namespace {

using ::testing::HasSubstr;

Report WithTimeline() {
  Report r;
  r.source = "gpuidle";
  r.window_end_ns = 3'000;
  DeviceReport d;
  d.rank = 0;
  d.window_end_ns = d.steady_end_ns = d.window_ns = 3'000;
  d.busy_ns = 1'500;
  d.idle[Subcause::kHostSync] = 700;
  d.idle_ns = 700;
  // With busy and idle time, it tiles the steady state (the reader's conservation rule).
  d.one_off = {{Phase::kSteady, OneOffKind::kCompilation, 800, 1, "cuModuleLoadData"}};
  d.timeline.start_ns = 0;
  d.timeline.bin_ns = 1'000;
  d.timeline.bins.resize(3);
  d.timeline.bins[0].busy_ns = 1'000;
  d.timeline.bins[1].busy_ns = 300;
  d.timeline.bins[1].idle_ns[static_cast<size_t>(Cause::kSyncBound)] = 700;
  d.timeline.bins[2].busy_ns = 200;
  d.timeline.bins[2].one_off_ns = 800;
  r.devices.push_back(d);
  return r;
}

TEST(ReportTimelineTest, ReadsBackWhatTheWriterWrote) {
  const Report r = WithTimeline();
  const std::string json = MakeJsonWriter()->Write(r);
  absl::StatusOr<Report> back = ParseReportJson(json, "r.json");
  ASSERT_TRUE(back.ok()) << back.status();
  const TimelineSummary& t = back->devices.at(0).timeline;
  const TimelineSummary& want = r.devices[0].timeline;
  EXPECT_EQ(t.start_ns, want.start_ns);
  EXPECT_EQ(t.bin_ns, want.bin_ns);
  ASSERT_EQ(t.bins.size(), want.bins.size());
  for (size_t i = 0; i < t.bins.size(); ++i) {
    EXPECT_EQ(t.bins[i].busy_ns, want.bins[i].busy_ns) << i;
    EXPECT_EQ(t.bins[i].idle_ns, want.bins[i].idle_ns) << i;
    EXPECT_EQ(t.bins[i].one_off_ns, want.bins[i].one_off_ns) << i;
  }
  EXPECT_EQ(MakeJsonWriter()->Write(*back), json);  // and writes the same again
}

TEST(ReportTimelineTest, AReportWithoutATimelineReadsAndWritesWithoutOne) {
  Report r = WithTimeline();
  r.devices[0].timeline = {};
  const std::string json = MakeJsonWriter()->Write(r);
  EXPECT_THAT(json, ::testing::Not(HasSubstr("\"timeline\"")));
  absl::StatusOr<Report> back = ParseReportJson(json, "r.json");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->devices[0].timeline.bin_ns, 0);
}

TEST(ReportTimelineTest, MalformedTimelinesAreRefusedWithWhereAndWhy) {
  const std::string json = MakeJsonWriter()->Write(WithTimeline());
  const auto refused = [&](const std::string& from, const std::string& to) {
    const std::string bad = absl::StrReplaceAll(json, {{from, to}});
    EXPECT_NE(bad, json) << from;
    absl::StatusOr<Report> r = ParseReportJson(bad, "r.json");
    EXPECT_FALSE(r.ok()) << from;
    return std::string(r.status().message());
  };
  EXPECT_THAT(refused("\"bin_ns\": 1000", "\"bin_ns\": 0"), HasSubstr("timeline.bin_ns"));
  EXPECT_THAT(refused("\"busy_ns\": [1000, 300, 200]", "\"busy_ns\": [1000, 300]"),
              HasSubstr("bins, busy_ns has 2"));
  EXPECT_THAT(refused("\"one_off_ns\": [0, 0, 800]", "\"one_off_ns\": [0, 0, 1001]"),
              HasSubstr("devices[0].timeline.one_off_ns[2]: not an integer within [0, bin_ns]"));
  EXPECT_THAT(refused("\"sync_bound\": [0, 700, 0]", "\"sync_bound\": [0, -1, 0]"),
              HasSubstr("timeline.idle_ns.sync_bound[1]"));
}

}  // namespace
}  // namespace gpuidle::internal
