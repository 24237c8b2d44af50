// The HTML report's script and style sheet (lib/report/html_report.js, html_report.css),
// embedded at build time by lib/CMakeLists.txt into a generated html_assets.cc.
#ifndef GPUIDLE_LIB_REPORT_HTML_ASSETS_H_
#define GPUIDLE_LIB_REPORT_HTML_ASSETS_H_

#include "absl/strings/string_view.h"

namespace gpuidle::internal {

absl::string_view HtmlReportScript();
absl::string_view HtmlReportStyle();

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_REPORT_HTML_ASSETS_H_
