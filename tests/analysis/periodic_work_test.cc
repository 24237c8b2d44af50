#include "analysis/periodic_work.h"

#include "gtest/gtest.h"

namespace gpuidle::internal {
namespace {

TEST(PeriodicWork, ReadsTheLineOfEverySiteFormat) {
  for (const auto& [site, line, function] : {
           std::tuple{"train.py:57 in main", "train.py:57", "main"},
           std::tuple{"aten::copy_ at /a b/train.py:44 in checkpoint", "/a b/train.py:44",
                      "checkpoint"},
           std::tuple{"train.py(42): step", "train.py:42", "step"},
           std::tuple{"/w/train.py:90 save_state", "/w/train.py:90", "save_state"},
       }) {
    const ProgramLine p = ParseProgramLine(site);
    EXPECT_EQ(p.line, line) << site;
    EXPECT_EQ(p.function, function) << site;
  }
  // No line: no site (a framework op alone, a kernel's name).
  EXPECT_TRUE(ParseProgramLine("aten::mm").line.empty());
  EXPECT_TRUE(ParseProgramLine("train.py:x in main").line.empty());
  EXPECT_TRUE(ParseProgramLine("").line.empty());
}

TEST(PeriodicWork, NamesTheActivityOfAFunction) {
  EXPECT_EQ(ActivityOfFunction("save_checkpoint"), "checkpointing");
  EXPECT_EQ(ActivityOfFunction("_save_to_state_dict"), "checkpointing");
  EXPECT_EQ(ActivityOfFunction("checkpoint"), "checkpointing");
  EXPECT_EQ(ActivityOfFunction("evaluate"), "evaluation");
  EXPECT_EQ(ActivityOfFunction("validation_step"), "evaluation");
  EXPECT_EQ(ActivityOfFunction("run_eval"), "evaluation");
  EXPECT_EQ(ActivityOfFunction("log_metrics"), "logging");
  EXPECT_EQ(ActivityOfFunction("_log_to_wandb"), "logging");
  EXPECT_EQ(ActivityOfFunction("log"), "logging");
  EXPECT_EQ(ActivityOfFunction("evaluate"), "evaluation");
  // The training loop's own functions are none of them, nor the mathematical log.
  for (const char* f :
       {"main", "train_step", "forward", "step", "loss_fn", "backward", "log_softmax", "log_prob",
        "compute_logits", "logits", "saved_values", "logsumexp", "evaluator_free_fn_x"}) {
    EXPECT_EQ(ActivityOfFunction(f), "") << f;
  }
}

TEST(PeriodicWork, MergesRowsOfTheSameActivityAndSite) {
  PeriodicWork a;
  a.activity = "checkpointing";
  a.site = "t.py:4 in save";
  a.occurrences = 2;
  a.span_ns = 20;
  a.idle_ns = 18;
  a.idle[Subcause::kHost] = 18;
  PeriodicWork b = a;
  b.occurrences = 1;
  b.span_ns = 5;
  b.idle_ns = 4;
  b.idle[Subcause::kHost] = 0;
  b.idle[Subcause::kHostSync] = 4;
  PeriodicWork c = a;
  c.activity = "logging";
  c.site = "t.py:9 in log";
  c.idle_ns = 100;
  std::vector<PeriodicWork> into{a};
  MergePeriodicWork({b, c}, &into);
  ASSERT_EQ(into.size(), 2u);
  EXPECT_EQ(into[0].activity, "logging");  // most idle first
  EXPECT_EQ(into[1].occurrences, 3);
  EXPECT_EQ(into[1].span_ns, 25);
  EXPECT_EQ(into[1].idle_ns, 22);
  EXPECT_EQ(into[1].idle[Subcause::kHostSync], 4);
}

}  // namespace
}  // namespace gpuidle::internal
