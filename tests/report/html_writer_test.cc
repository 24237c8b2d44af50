#include <cstdint>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gpuidle/report.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "report/html_assets.h"
#include "report/writer.h"
#include "testing/json.h"

namespace gpuidle::internal {
namespace {

using ::gpuidle::testing::Parse;
using ::gpuidle::testing::Str;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kMs = 1'000'000;
const std::string kDataOpen = "<script type=\"application/json\" class=\"gpuidle-data\">";
const std::string kPageOpen = "<script type=\"application/json\" class=\"gpuidle-page\">";

// Strings a trace may hold that would break out of the page if written as they are.
const std::string kHostile = "</script><script>alert(1)</script><!-- & </SCRIPT >";

Report SampleReport() {
  Report r;
  r.source = "gpuidle";
  r.inputs = {kHostile};
  r.window_start_ns = 0;
  r.window_end_ns = 100 * kMs;
  DeviceReport d;
  d.rank = 0;
  d.device = 0;
  d.name = kHostile;
  d.window_end_ns = d.steady_end_ns = d.window_ns = 100 * kMs;
  d.busy_ns = 60 * kMs;
  d.idle[Subcause::kDataLoader] = 40 * kMs;
  d.idle_ns = 40 * kMs;
  d.timeline.start_ns = 0;
  d.timeline.bin_ns = 50 * kMs;
  d.timeline.bins.resize(2);
  d.timeline.bins[0].busy_ns = 50 * kMs;
  d.timeline.bins[1].busy_ns = 10 * kMs;
  d.timeline.bins[1].idle_ns[static_cast<size_t>(Cause::kDataStarved)] = 40 * kMs;
  d.collective_timings.push_back({kMs, 2 * kMs, 1, 64, 0});
  d.collectives.push_back({"0", "allreduce", 1, kMs, kMs, 64, std::nullopt});
  r.devices.push_back(d);
  GapRecord g;
  g.rank = 0;
  g.start_ns = 60 * kMs;
  g.end_ns = 100 * kMs;
  g.subcause = Subcause::kDataLoader;
  g.next_op = kHostile;
  g.evidence = "DataLoader.__next__ <img src=x onerror=alert(2)>";
  g.call_site = "train.py:42 \xff\xfe";  // not UTF-8
  r.longest_gaps.push_back(g);
  Advice a;
  a.subcause = Subcause::kDataLoader;
  a.share_of_lost_time = 1;
  a.fix = "more DataLoader workers";
  r.advice.push_back(a);
  return r;
}

std::string Html(const Report& r) { return MakeHtmlWriter()->Write(r); }

// The page's embedded data (the report, or with kPageOpen the page's own), as its script reads it.
std::string EmbeddedJson(const std::string& page, const std::string& element = kDataOpen) {
  const size_t open = page.find(element);
  if (open == std::string::npos) return "";
  const size_t start = open + element.size();
  const size_t end = page.find("</script>", start);
  return end == std::string::npos ? "" : page.substr(start, end - start);
}

size_t Count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(HtmlWriterTest, IsChosenByNameAndExtension) {
  ASSERT_TRUE(WriterForFormat("html").ok());
  EXPECT_EQ((*WriterForFormat("html"))->Write(SampleReport()), Html(SampleReport()));
  EXPECT_EQ(FormatForPath("out/report.html"), "html");
  EXPECT_EQ(FormatForPath("REPORT.HTM"), "html");
  EXPECT_EQ(FormatForPath("report.html.gz"), "html");
  EXPECT_EQ(FormatForPath("report.htmlx"), "text");
  EXPECT_THAT(std::string(WriterForFormat("xml").status().message()), HasSubstr("html"));
}

TEST(HtmlWriterTest, EmbedsTheJsonReportWithoutTheCollectiveTimingTables) {
  const Report r = SampleReport();
  const rapidjson::Document page = Parse(EmbeddedJson(Html(r)));
  const rapidjson::Document json = Parse(MakeJsonWriter()->Write(r));
  ASSERT_TRUE(page.IsObject());
  EXPECT_EQ(Str(page["schema"]), Str(json["schema"]));
  const rapidjson::Value& d = page["devices"][0];
  EXPECT_EQ(d["collective_timings"]["start_ns"].Size(), 0u);
  EXPECT_EQ(d["collectives_not_listed"].GetInt64(), 1);  // counted, not listed
  // Everything else is the JSON report's, value for value.
  for (auto m = json.MemberBegin(); m != json.MemberEnd(); ++m) {
    if (Str(m->name) == "devices") continue;
    EXPECT_TRUE(page[m->name] == m->value) << Str(m->name);
  }
  EXPECT_EQ(d["timeline"]["bin_ns"].GetInt64(), 50 * kMs);
  EXPECT_EQ(d["timeline"]["idle_ns"]["data_starved"][1].GetInt64(), 40 * kMs);
}

TEST(HtmlWriterTest, HostileStringsStayDataAndReadBackUnchanged) {
  const std::string page = Html(SampleReport());
  // Only the page's own elements open and close scripts; no string adds a tag or a comment.
  EXPECT_EQ(Count(page, "<script"), 3u);  // the report, the page's own data, the script
  EXPECT_EQ(Count(page, "</script>"), 3u);
  EXPECT_THAT(page, Not(HasSubstr("<!--")));
  EXPECT_THAT(page, Not(HasSubstr("<img")));
  const std::string data = EmbeddedJson(page);
  EXPECT_EQ(data.find_first_of("<>&"), std::string::npos);
  const rapidjson::Document doc = Parse(data);
  EXPECT_EQ(Str(doc["devices"][0]["name"]), kHostile);
  EXPECT_EQ(Str(doc["inputs"][0]), kHostile);
  EXPECT_EQ(Str(doc["longest_gaps"][0]["next_op"]), kHostile);
  EXPECT_THAT(Str(doc["longest_gaps"][0]["call_site"]), HasSubstr("train.py:42 "));
}

TEST(HtmlWriterTest, RequestsNothingFromTheNetwork) {
  const std::string page = Html(SampleReport());
  for (const char* external : {"http://", "https://", "<link", "url(", "src=\"", "@import"}) {
    EXPECT_THAT(page, Not(HasSubstr(external))) << external;
  }
  EXPECT_THAT(page, HasSubstr("Content-Security-Policy\" content=\"default-src 'none'"));
}

TEST(HtmlWriterTest, IsDeterministicAndCarriesItsScriptAndStyle) {
  const Report r = SampleReport();
  const std::string page = Html(r);
  EXPECT_EQ(page, Html(r));
  EXPECT_THAT(page, ::testing::StartsWith("<!DOCTYPE html>"));
  EXPECT_THAT(page, HasSubstr("data-drawn-bins"));  // the script, embedded at build time
  EXPECT_THAT(page, HasSubstr(".gpuidle-report"));  // the style sheet
}

TEST(HtmlWriterTest, AReportWithoutDevicesIsStillAPage) {
  Report r;
  r.source = "gpuidle";
  const std::string page = Html(r);
  const rapidjson::Document doc = Parse(EmbeddedJson(page));
  EXPECT_EQ(doc["devices"].Size(), 0u);
}

// Rank 0 of a two-rank job, as a merge of ranks reports it: 100 ms of steady state in 10 bins,
// two steps, the second waiting 20 ms for rank 1; rank 1's wait is not known.
Report JobReport() {
  Report r;
  r.source = "pytorch-profiler";
  for (int rank = 0; rank < 2; ++rank) {
    DeviceReport& d = r.devices.emplace_back();
    d.rank = rank;
    d.window_end_ns = d.steady_end_ns = d.window_ns = 100 * kMs;
    d.busy_ns = 90 * kMs;
    d.idle[Subcause::kHost] = 10 * kMs;
    d.idle_ns = 10 * kMs;
    d.timeline.bin_ns = 10 * kMs;
    d.timeline.bins.resize(10);
    for (auto& b : d.timeline.bins) b.busy_ns = 9 * kMs;
    d.comm_ns = 30 * kMs;
    if (rank == 0) d.comm_wait_ns = 20 * kMs;
    for (int i = 0; i < 2; ++i) {
      StepReport& s = r.steps.emplace_back();
      s.rank = rank;
      s.name = absl::StrCat("ProfilerStep#", i);
      s.start_ns = i * 50 * kMs;
      s.end_ns = s.start_ns + 50 * kMs;
      s.busy_ns = 45 * kMs;
      if (rank == 0) s.comm_wait_ns = i * 20 * kMs;
    }
  }
  return r;
}

// The script draws waiting for peers from the report's own figures (docs/HTML_REPORT.md): the
// device's and each step's wait, and the bins' busy time that holds it.
TEST(HtmlWriterTest, CarriesTheWaitsThePageDrawsWaitingFrom) {
  const rapidjson::Document doc = Parse(EmbeddedJson(Html(JobReport())));
  ASSERT_TRUE(doc.IsObject());
  EXPECT_EQ(doc["devices"][0]["comm_wait_ns"].GetInt64(), 20 * kMs);
  EXPECT_TRUE(doc["devices"][1]["comm_wait_ns"].IsNull());
  EXPECT_EQ(doc["steps"][1]["comm_wait_ns"].GetInt64(), 20 * kMs);
  EXPECT_EQ(doc["devices"][0]["timeline"]["busy_ns"].Size(), 10u);
  EXPECT_EQ(doc["devices"][0]["lost_ns"].GetInt64(), 30 * kMs);  // idle + waiting
}

TEST(HtmlWriterTest, CarriesTheOneOffKindsAsTheTextOutputsNameThem) {
  const rapidjson::Document data = Parse(EmbeddedJson(Html(SampleReport()), kPageOpen));
  ASSERT_TRUE(data.IsObject());
  EXPECT_EQ(Str(data["one_off_labels"]["set_up"]), "set-up");
  EXPECT_EQ(Str(data["one_off_labels"]["cuda_init"]), "CUDA init");
  EXPECT_EQ(Str(data["one_off_labels"]["compilation"]), "compilation");
  EXPECT_EQ(Str(data["steady_one_off_labels"]["compilation"]), "re-compilation");
  EXPECT_EQ(data["one_off_labels"].MemberCount(), static_cast<size_t>(kNumOneOffKinds));
}

// The script's own words: one meaning for a percentage (of the steady state, or of step time),
// never of lost time or of idle time; the verdict of a healthy run; no evidence for unattributed.
TEST(HtmlWriterTest, TheScriptLabelsEverySharePerTheOneDecision) {
  const std::string page(HtmlReportScript());
  EXPECT_THAT(Html(SampleReport()), HasSubstr(page));  // the page's script
  EXPECT_THAT(page, HasSubstr("'of the steady state'"));
  EXPECT_THAT(page, HasSubstr("of step time"));
  EXPECT_THAT(page, Not(HasSubstr("of lost time")));
  EXPECT_THAT(page, Not(HasSubstr("of idle")));
  EXPECT_THAT(page, Not(HasSubstr("share_of_lost_time")));  // the script reads the steady share
  EXPECT_THAT(page, HasSubstr("share_of_steady_state"));
  EXPECT_THAT(page, HasSubstr("Nothing worth fixing here: "));
  EXPECT_THAT(page, HasSubstr("no evidence in the trace"));
}

}  // namespace
}  // namespace gpuidle::internal
