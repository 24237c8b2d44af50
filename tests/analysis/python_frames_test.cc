#include "analysis/python_frames.h"

#include <cstddef>
#include <optional>

#include "gtest/gtest.h"

namespace gpuidle::internal {
namespace {

TEST(PythonFrames, TorchProfilerNamesTheLineTheFunctionStartsAt) {
  const PythonFrame f = ParsePythonFrame("item_sync.py(21): step");
  EXPECT_EQ(f.file, "item_sync.py");
  EXPECT_EQ(f.line, "21");
  EXPECT_EQ(f.function, "step");
  EXPECT_TRUE(f.line_starts_function);
  // Never "item_sync.py:21": line 21 is `def step():`, not the call.
  EXPECT_EQ(DescribePythonFrame(f), "step() in item_sync.py (def at line 21)");
}

TEST(PythonFrames, GpuidlesSamplesNameTheRunningLine) {
  const PythonFrame f = ParsePythonFrame("/work/train.py:42 step");
  EXPECT_EQ(f.file, "/work/train.py");
  EXPECT_EQ(f.line, "42");
  EXPECT_EQ(f.function, "step");
  EXPECT_FALSE(f.line_starts_function);
  EXPECT_EQ(DescribePythonFrame(f), "/work/train.py:42 step");
}

TEST(PythonFrames, APathWithSpacesAndColonsKeepsItsLine) {
  const PythonFrame f = ParsePythonFrame("/home/a b/c:d/train.py:7 <module>");
  EXPECT_EQ(f.file, "/home/a b/c:d/train.py");
  EXPECT_EQ(f.line, "7");
  EXPECT_EQ(f.function, "<module>");
}

TEST(PythonFrames, AnythingElseIsAllFunction) {
  for (const char* text : {"aten::mm", "cudaLaunchKernel", "train.py:x step", "train.py:12"}) {
    const PythonFrame f = ParsePythonFrame(text);
    EXPECT_EQ(f.function, text);
    EXPECT_TRUE(f.file.empty()) << text;
    EXPECT_EQ(DescribePythonFrame(f), text);
  }
}

TEST(PythonFrames, ADescriptionReadsBackAfterAFrameworkOp) {
  const std::string text =
      "aten::item at " + DescribePythonFrame(ParsePythonFrame("/w/item_sync.py(21): step"));
  size_t start = 0;
  const std::optional<PythonFrame> f = ParseFunctionDescription(text, &start);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->function, "step");
  EXPECT_EQ(f->file, "/w/item_sync.py");
  EXPECT_EQ(f->line, "21");
  EXPECT_TRUE(f->line_starts_function);
  EXPECT_EQ(text.substr(start), "step() in /w/item_sync.py (def at line 21)");
}

TEST(PythonFrames, TextThatIsNoDescriptionIsNotOne) {
  size_t start = 99;
  EXPECT_FALSE(ParseFunctionDescription("train.py:42 step", &start).has_value());
  EXPECT_FALSE(ParseFunctionDescription("() in x.py (def at line 3)", &start).has_value());
  EXPECT_FALSE(ParseFunctionDescription("step() in x.py (def at line 3", &start).has_value());
  EXPECT_EQ(start, 99u);
}

}  // namespace
}  // namespace gpuidle::internal
