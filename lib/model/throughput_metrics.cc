#include "model/throughput_metrics.h"

#include <algorithm>

#include "absl/strings/match.h"

namespace gpuidle::internal {
namespace {

constexpr size_t ShortestName() {
  size_t n = kThroughputMetrics[0].name.size();
  for (const ThroughputMetric& m : kThroughputMetrics) n = std::min(n, m.name.size());
  return n;
}

}  // namespace

std::optional<ThroughputFigure> ThroughputFigureOf(absl::string_view metric) {
  // Every metric name holds "__" (unit__counter); no Kineto arg does.
  if (metric.size() < ShortestName() || !absl::StrContains(metric, "__")) return std::nullopt;
  for (const ThroughputMetric& m : kThroughputMetrics) {
    if (m.name == metric) return m.figure;
  }
  return std::nullopt;
}

void PutThroughput(ThroughputFigure figure, double value, GpuThroughputSample* s) {
  const auto v = static_cast<float>(value);
  switch (figure) {
    case ThroughputFigure::kSmActive:
      s->sm_active_pct = v;
      break;
    case ThroughputFigure::kTensorActive:
      s->tensor_active_pct = std::max(s->tensor_active_pct, v);
      break;
    case ThroughputFigure::kDram:
      s->dram_pct = v;
      break;
    case ThroughputFigure::kPcieRead:
      s->pcie_read_bytes_per_s = v;
      break;
    case ThroughputFigure::kPcieWrite:
      s->pcie_write_bytes_per_s = v;
      break;
    case ThroughputFigure::kNvlinkRead:
      s->nvlink_read_bytes_per_s = v;
      break;
    case ThroughputFigure::kNvlinkWrite:
      s->nvlink_write_bytes_per_s = v;
      break;
  }
}

}  // namespace gpuidle::internal
