#include <cstdint>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gpuidle/report.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
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

// The page's embedded data, as the page's script reads it.
std::string EmbeddedJson(const std::string& page) {
  const size_t open = page.find(kDataOpen);
  if (open == std::string::npos) return "";
  const size_t start = open + kDataOpen.size();
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
  EXPECT_EQ(Count(page, "<script"), 2u);
  EXPECT_EQ(Count(page, "</script>"), 2u);
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

}  // namespace
}  // namespace gpuidle::internal
