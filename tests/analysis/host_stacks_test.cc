// Classifying Python stacks of long host stretches (docs/ANALYSIS.md, "Host-stack evidence").
#include "analysis/host_stacks.h"

#include "gtest/gtest.h"

namespace gpuidle::internal {
namespace {

TEST(HostStacks, NamesAnInputPipelineByItsFunctionsAndLibraries) {
  EXPECT_EQ(ClassifyStack("train.py:10 main\ndata.py:22 __getitem__"),
            HostActivity::kInputPipeline);
  EXPECT_EQ(ClassifyStack("train.py:10 main\n/venv/lib/python3.12/site-packages/torch/utils/data/"
                          "_utils/collate.py:140 default_collate"),
            HostActivity::kInputPipeline);
  EXPECT_EQ(ClassifyStack("train.py(10): main\n/venv/site-packages/PIL/Image.py(900): convert"),
            HostActivity::kInputPipeline);
}

TEST(HostStacks, CompilationWinsWhereverItIsInTheStack) {
  EXPECT_EQ(ClassifyStack("train.py:5 step\n/venv/site-packages/jax/_src/compiler.py:300 "
                          "backend_compile\ndata.py:3 __getitem__"),
            HostActivity::kCompilation);
  EXPECT_EQ(ClassifyStack("k.py:9 run\n/venv/site-packages/cupy/_core/core.py:1 "
                          "_compile_module_with_cache"),
            HostActivity::kCompilation);
}

TEST(HostStacks, PythonsRegexCompilerIsNotJitCompilation) {
  EXPECT_EQ(ClassifyStack("a.py:1 f\n/usr/lib/python3.12/re/__init__.py:226 compile"),
            HostActivity::kOther);
}

TEST(HostStacks, NamesCheckpointingAndLogging) {
  EXPECT_EQ(ClassifyStack("train.py:50 main\n/venv/site-packages/torch/serialization.py:900 save"),
            HostActivity::kCheckpointing);
  EXPECT_EQ(ClassifyStack("t.py:1 main\n/venv/site-packages/tqdm/std.py:1200 update"),
            HostActivity::kLogging);
  // A checkpoint that logs on its way is a checkpoint.
  EXPECT_EQ(ClassifyStack("t.py:1 main\n/venv/site-packages/torch/serialization.py:900 save\n"
                          "/usr/lib/python3.12/logging/__init__.py:1500 info"),
            HostActivity::kCheckpointing);
}

TEST(HostStacks, ShowsTheInnermostFrameOfTheProgramsOwnCode) {
  EXPECT_EQ(DisplayFrame("train.py:90 main\ntrain.py:40 collate\n"
                         "/usr/lib/python3.12/json/decoder.py:353 raw_decode"),
            "train.py:40 collate");
  EXPECT_EQ(DisplayFrame("/venv/site-packages/a.py:1 f\n/venv/site-packages/b.py:2 g"),
            "/venv/site-packages/b.py:2 g");
  EXPECT_EQ(DisplayFrame("train.py(42): step"), "step() in train.py (def at line 42)");
  EXPECT_EQ(DisplayFrame(""), "");
}

}  // namespace
}  // namespace gpuidle::internal
