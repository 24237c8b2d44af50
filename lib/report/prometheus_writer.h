// A report as Prometheus metrics (text exposition format 0.0.4), for long jobs watched while
// they run: a node_exporter textfile or gpuidle's scrape port (docs/METRICS.md lists the
// series).
//
//   MetricsLabels labels{.host = "node7", .rank = "3", .pid = "4242"};
//   std::string text = FormatPrometheusMetrics(report, labels);
#ifndef GPUIDLE_LIB_REPORT_PROMETHEUS_WRITER_H_
#define GPUIDLE_LIB_REPORT_PROMETHEUS_WRITER_H_

#include <string>

#include "absl/strings/string_view.h"
#include "gpuidle/report.h"

namespace gpuidle::internal {

// Labels of the process, added to every series; an empty value adds no label (Prometheus
// treats an empty label as an absent one).
struct MetricsLabels {
  std::string host;
  // The process's rank: the series of a device use DeviceReport::rank instead where it is set.
  std::string rank;
  std::string pid;
};

// The metrics of report. Every series of a device is there even when it is zero, so that
// series do not come and go between scrapes; the order is fixed (family by family, devices
// by rank and number). Counters are never negative, values never NaN or infinite.
std::string FormatPrometheusMetrics(const Report& report, const MetricsLabels& labels);

// v as a label value inside double quotes: backslash, double quote and newline escaped, bytes
// that are not UTF-8 replaced.
std::string EscapePrometheusLabelValue(absl::string_view v);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_REPORT_PROMETHEUS_WRITER_H_
