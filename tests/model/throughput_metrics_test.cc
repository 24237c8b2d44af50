#include "model/throughput_metrics.h"

#include "gtest/gtest.h"

namespace gpuidle::internal {
namespace {

TEST(ThroughputMetrics, EveryNameOfTheTableGivesItsFigure) {
  for (const ThroughputMetric& m : kThroughputMetrics) {
    const std::optional<ThroughputFigure> f = ThroughputFigureOf(m.name);
    ASSERT_TRUE(f.has_value()) << m.name;
    EXPECT_EQ(*f, m.figure) << m.name;
  }
}

TEST(ThroughputMetrics, OtherNamesGiveNone) {
  for (absl::string_view name : {"", "correlation", "Input Dims", "sm__cycles_active.avg",
                                 "sm__cycles_active.avg.pct_of_peak_sustained_elapsedX",
                                 "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
                                 "SM__CYCLES_ACTIVE.AVG.PCT_OF_PEAK_SUSTAINED_ELAPSED"}) {
    EXPECT_FALSE(ThroughputFigureOf(name).has_value()) << name;
  }
}

TEST(ThroughputMetrics, TheBusiestTensorPipeCounts) {
  GpuThroughputSample s;
  PutThroughput(ThroughputFigure::kTensorActive, 40, &s);
  PutThroughput(ThroughputFigure::kTensorActive, 5, &s);
  PutThroughput(ThroughputFigure::kDram, 70, &s);
  PutThroughput(ThroughputFigure::kNvlinkWrite, 3e9, &s);
  EXPECT_FLOAT_EQ(s.tensor_active_pct, 40);
  EXPECT_FLOAT_EQ(s.dram_pct, 70);
  EXPECT_FLOAT_EQ(s.nvlink_write_bytes_per_s, 3e9);
  EXPECT_LT(s.sm_active_pct, 0);  // not given: not measured
}

}  // namespace
}  // namespace gpuidle::internal
