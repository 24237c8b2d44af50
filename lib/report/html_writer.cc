// The HTML report: one self-contained page (docs/HTML_REPORT.md). The report's JSON (the schema
// of docs/REPORT_SCHEMA.md, without the collective timing tables that only a merge of ranks
// reads) is embedded as data; html_report.js draws it onto canvases and html_report.css styles
// it. Nothing is fetched: the page sets a content security policy that forbids every request.
//
// Beside the report the page gets a second, small data element ("gpuidle-page") of what the
// script needs and the report does not hold: the text outputs' names of the one-off kinds
// (report/phases.h, one home for both).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "gpuidle/report.h"
#include "report/html_assets.h"
#include "report/phases.h"
#include "report/writer.h"

namespace gpuidle::internal {
namespace {

// The JSON as the content of a <script type="application/json"> element: the pretty-printing
// whitespace between tokens dropped (a report of 100k gaps shrinks by a third), and every <, >
// and & written as a \u escape. Those characters occur only inside JSON strings, where the escape
// means the same character to JSON.parse, and without them no string from a trace can end the
// element ("</script>") or open a comment ("<!--").
std::string EmbeddableJson(absl::string_view json) {
  std::string out;
  out.reserve(json.size());
  bool in_string = false;
  bool escaped = false;
  for (const char c : json) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      continue;
    }
    switch (c) {
      case '<':
        out += "\\u003c";
        break;
      case '>':
        out += "\\u003e";
        break;
      case '&':
        out += "\\u0026";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

// Each one-off kind's name in the text outputs, for phase p: {"set_up":"set-up",...}.
std::string OneOffLabels(Phase p) {
  std::vector<std::string> entries;
  for (int k = 0; k < kNumOneOffKinds; ++k) {
    const auto kind = static_cast<OneOffKind>(k);
    entries.push_back(
        absl::StrCat("\"", OneOffKindName(kind), "\":\"", OneOffLabel(kind, p), "\""));
  }
  return absl::StrCat("{", absl::StrJoin(entries, ","), "}");
}

// The page's own data: {"one_off_labels":{...},"steady_one_off_labels":{...}}.
std::string PageData() {
  return absl::StrCat("{\"one_off_labels\":", OneOffLabels(Phase::kStartUp),
                      ",\"steady_one_off_labels\":", OneOffLabels(Phase::kSteady), "}");
}

class HtmlWriter : public ReportWriter {
 public:
  std::string Write(const Report& r) const override {
    const std::string page_data = EmbeddableJson(PageData());
    Report data = r;
    for (DeviceReport& d : data.devices) {
      d.collectives_not_listed += static_cast<int64_t>(d.collective_timings.size());
      d.collective_timings = {};
    }
    const std::string json = EmbeddableJson(MakeJsonWriter()->Write(data));
    std::string page;
    page.reserve(json.size() + page_data.size() + HtmlReportScript().size() +
                 HtmlReportStyle().size() + 1024);
    page +=
        "<!DOCTYPE html>\n"
        "<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        // Inline style and script only: no request of any kind, whatever the data holds.
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<title>gpuidle report</title>\n</head>\n<body>\n"
        "<div class=\"gpuidle-report\" data-status=\"loading\">\n<style>\n";
    absl::StrAppend(&page, HtmlReportStyle());
    page +=
        "</style>\n"
        // Removed by the script as it starts: seen only where scripts do not run (an untrusted
        // notebook, a viewer without JavaScript).
        "<p class=\"gpuidle-fallback\">This gpuidle report is drawn by its script, which did "
        "not run here (in a notebook: trust it). The report is in the page as JSON.</p>\n"
        "<script type=\"application/json\" class=\"gpuidle-data\">";
    page += json;
    page += "</script>\n<script type=\"application/json\" class=\"gpuidle-page\">";
    page += page_data;
    page += "</script>\n<script>\n";
    absl::StrAppend(&page, HtmlReportScript());
    page += "</script>\n</div>\n</body>\n</html>\n";
    return page;
  }
};

}  // namespace

std::unique_ptr<ReportWriter> MakeHtmlWriter() { return std::make_unique<HtmlWriter>(); }

}  // namespace gpuidle::internal
