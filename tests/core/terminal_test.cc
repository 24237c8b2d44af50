#include "core/terminal.h"

#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuidle::internal {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kCjk[] = "\xe6\x95\xb0\xe6\x8d\xae";  // two wide characters: 4 columns
constexpr char kEAcute[] = "e\xcc\x81";              // e + combining acute: 1 column

TEST(DisplayWidth, CountsColumnsNotBytes) {
  EXPECT_EQ(DisplayWidth("GPU 0"), 5u);
  EXPECT_EQ(DisplayWidth(kCjk), 4u);
  EXPECT_EQ(DisplayWidth(kEAcute), 1u);
  EXPECT_EQ(DisplayWidth("\xc3\xa9"), 1u);              // precomposed e-acute
  EXPECT_EQ(DisplayWidth("\xf0\x9f\x9a\x80"), 2u);      // an emoji (rocket)
  EXPECT_EQ(DisplayWidth("\x1b[1;31mred\x1b[0m"), 3u);  // escape codes take none
}

TEST(ElideMiddle, KeepsTheStartAndTheEndAroundAnEllipsis) {
  const std::string site = "/very/long/path/to/some/deeply/nested/module/train.py:123";
  const std::string e = ElideMiddle(site, 30);
  EXPECT_EQ(DisplayWidth(e), 30u);
  EXPECT_THAT(e, StartsWith("/very/long/pat"));
  EXPECT_THAT(e, EndsWith("train.py:123"));
  EXPECT_THAT(e, HasSubstr("..."));
  EXPECT_EQ(ElideMiddle("short", 30), "short");
  EXPECT_EQ(ElideMiddle("abcdef", 2), "..");
}

TEST(ElideMiddle, NeverCutsAWideCharacterOrGoesOverTheWidth) {
  std::string wide;
  for (int i = 0; i < 40; ++i) wide += kCjk;
  for (size_t width = 3; width < 40; ++width) {
    const std::string e = ElideMiddle(wide, width);
    EXPECT_LE(DisplayWidth(e), width);
    EXPECT_GE(DisplayWidth(e) + 1, width);  // at most one column lost to a wide character
    EXPECT_EQ(e.find("\xef\xbf\xbd"), std::string::npos);
    // Every byte sequence left is whole: the text minus the dots is CJK only.
    std::string rest = e;
    rest.erase(rest.find("..."), 3);
    EXPECT_EQ(rest.size() % 3, 0u) << e;
  }
}

TEST(ElideMiddle, ClosesAColourItCut) {
  const std::string coloured = "\x1b[31m" + std::string(50, 'x') + "\x1b[0m";
  const std::string e = ElideMiddle(coloured, 20);
  EXPECT_EQ(DisplayWidth(e), 20u);
  EXPECT_THAT(e, EndsWith("\x1b[0m"));
  EXPECT_EQ(StripEscapes(e), ElideMiddle(std::string(50, 'x'), 20));
}

TEST(ElideKeepingFileNames, ShortensDirectoriesBeforeFileNamesAndLines) {
  const std::string site =
      "aten::item at /home/user/projects/lightning/examples/pytorch/basics/train_mnist.py:88 "
      "training_step";
  for (size_t width : {100u, 80u, 60u}) {
    const std::string e = ElideKeepingFileNames(site, width);
    EXPECT_LE(DisplayWidth(e), width);
    EXPECT_THAT(e, HasSubstr("/train_mnist.py:88 training_step")) << e;
    EXPECT_THAT(e, StartsWith("aten::item at /")) << e;
  }
  // The longest directory goes first: a short one beside it keeps its name.
  const std::string two = "/a/b/x.py:1 f <- /very/long/directory/of/many/parts/y.py:2 g";
  const std::string e = ElideKeepingFileNames(two, 40);
  EXPECT_LE(DisplayWidth(e), 40u);
  EXPECT_THAT(e, StartsWith("/a/b/x.py:1 f <- ")) << e;
  EXPECT_THAT(e, EndsWith("/y.py:2 g")) << e;
  EXPECT_EQ(ElideKeepingFileNames(site, 200), site);
}

TEST(ElideKeepingFileNames, KeepsAPathsBaseNameAndExtension) {
  EXPECT_EQ(ElideKeepingFileNames("a/b.json", 60), "a/b.json");
  const std::string path = "tests/data/traces/live_python/tiny_mlp_launch_bound.report.json";
  for (size_t max = 24; max < path.size(); ++max) {
    const std::string s = ElideKeepingFileNames(path, max);
    EXPECT_LE(DisplayWidth(s), max) << s;
    EXPECT_THAT(s, EndsWith(".report.json")) << max;
    if (max >= 40) {
      EXPECT_THAT(s, EndsWith("/tiny_mlp_launch_bound.report.json")) << max;
    }
  }
  // The diff header's case: two runs told apart by the end of their names.
  EXPECT_THAT(ElideKeepingFileNames("/runs/dataloader_starved.before.report.json", 30),
              EndsWith("before.report.json"));
  // Never inside a UTF-8 sequence.
  const std::string s = ElideKeepingFileNames(
      "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9.json", 10);
  EXPECT_LE(DisplayWidth(s), 10u);
  EXPECT_THAT(s, EndsWith(".json"));
  EXPECT_EQ(s.rfind("\xc3\xa9", 0), 0u);
}

TEST(ElideKeepingFileNames, ElidesTheMiddleWhereDirectoriesAreNotEnough) {
  const std::string e = ElideKeepingFileNames("/d/" + std::string(60, 'n') + ".py:3 f", 30);
  EXPECT_EQ(DisplayWidth(e), 30u);
  EXPECT_THAT(e, HasSubstr("..."));
  EXPECT_THAT(e, EndsWith(".py:3 f"));
  const std::string none = ElideKeepingFileNames("abcdefghijklmnopqrstuvwxyz", 12);
  EXPECT_EQ(none, "abc...uvwxyz");
}

TEST(Cell, PadsByColumns) {
  EXPECT_EQ(Cell("ab", 5), "ab   ");
  EXPECT_EQ(DisplayWidth(Cell(kCjk, 8)), 8u);
  EXPECT_EQ(Cell(std::string(10, 'a'), 5), "a...a");
  EXPECT_EQ(PadLeft("7", 3), "  7");
  EXPECT_EQ(PadRight("\x1b[1mab\x1b[0m", 4), "\x1b[1mab\x1b[0m  ");
}

std::vector<std::string> Lines(const std::string& text) { return absl::StrSplit(text, '\n'); }

TEST(FitLines, WrapsALongLineAtSpacesWithAHangingIndent) {
  std::string line = "  warning:";
  for (int i = 0; i < 40; ++i) line += " word" + std::to_string(i);
  const std::string fitted = FitLines("title\n" + line + "\nend\n", 60);
  const std::vector<std::string> lines = Lines(fitted);
  ASSERT_GT(lines.size(), 4u);
  EXPECT_EQ(lines.front(), "title");
  EXPECT_EQ(lines[lines.size() - 2], "end");
  EXPECT_EQ(lines.back(), "");  // the final newline stays
  for (const std::string& l : lines) EXPECT_LE(DisplayWidth(l), 60u) << l;
  EXPECT_THAT(lines[1], StartsWith("  warning: word0"));
  EXPECT_THAT(lines[2], StartsWith("      word"));
  // Nothing is lost: the words are all there, in order.
  std::string words;
  for (size_t i = 1; i + 2 < lines.size(); ++i) {
    words += std::string(absl::StripLeadingAsciiWhitespace(lines[i])) + " ";
  }
  EXPECT_EQ(words, line.substr(2) + " ");
}

TEST(FitLines, ElidesAWordWiderThanTheLine) {
  const std::string path = "/" + std::string(200, 'p') + "/trace.json";
  const std::string fitted = FitLines("source: " + path, 100);
  for (const std::string& l : Lines(fitted)) EXPECT_LE(DisplayWidth(l), 100u) << l;
  EXPECT_THAT(fitted, EndsWith("/trace.json"));
}

TEST(FitLines, LeavesLinesThatFitAsTheyAre) {
  const std::string table = "  step       ms   busy\n  1          2.0  50.0%\n";
  EXPECT_EQ(FitLines(table, 100), table);
}

TEST(StripEscapes, RemovesOnlyEscapeSequences) {
  EXPECT_EQ(StripEscapes("\x1b[1mGPU 0\x1b[0m busy \x1b[33msync_bound\x1b[0m"),
            "GPU 0 busy sync_bound");
  EXPECT_EQ(StripEscapes("a \\x1b[2J b"), "a \\x1b[2J b");  // an escaped one is text
}

TEST(ParseColorWhen, TakesAutoAlwaysNever) {
  EXPECT_EQ(ParseColorWhen("auto"), ColorWhen::kAuto);
  EXPECT_EQ(ParseColorWhen(" Always "), ColorWhen::kAlways);
  EXPECT_EQ(ParseColorWhen("NEVER"), ColorWhen::kNever);
  EXPECT_EQ(ParseColorWhen("yes"), std::nullopt);
  EXPECT_EQ(ParseColorWhen(""), std::nullopt);
}

EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

TEST(UseColor, ColoursATerminalOnlyInAutoMode) {
  EXPECT_TRUE(UseColor(ColorWhen::kAuto, true, Env({})));
  EXPECT_FALSE(UseColor(ColorWhen::kAuto, false, Env({})));
  EXPECT_FALSE(UseColor(ColorWhen::kAuto, true, Env({{"TERM", "dumb"}})));
  EXPECT_TRUE(UseColor(ColorWhen::kAuto, true, Env({{"TERM", "xterm-256color"}})));
}

TEST(UseColor, HonoursNoColorWhenSetAndNotEmpty) {
  EXPECT_FALSE(UseColor(ColorWhen::kAuto, true, Env({{"NO_COLOR", "1"}})));
  EXPECT_FALSE(UseColor(ColorWhen::kAuto, true, Env({{"NO_COLOR", "0"}})));  // any value
  EXPECT_TRUE(UseColor(ColorWhen::kAuto, true, Env({{"NO_COLOR", ""}})));
  EXPECT_FALSE(
      UseColor(ColorWhen::kAuto, false, Env({{"NO_COLOR", "1"}, {"CLICOLOR_FORCE", "1"}})));
}

TEST(UseColor, IsForcedByClicolorForceOrAlways) {
  EXPECT_TRUE(UseColor(ColorWhen::kAuto, false, Env({{"CLICOLOR_FORCE", "1"}})));
  EXPECT_FALSE(UseColor(ColorWhen::kAuto, false, Env({{"CLICOLOR_FORCE", "0"}})));
  EXPECT_TRUE(UseColor(ColorWhen::kAlways, false, Env({{"NO_COLOR", "1"}})));
  EXPECT_FALSE(UseColor(ColorWhen::kNever, true, Env({{"CLICOLOR_FORCE", "1"}})));
}

TEST(IsTerminal, SaysAPipeIsNone) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  EXPECT_FALSE(IsTerminal(fds[1]));
  EXPECT_FALSE(IsTerminal(-1));
  close(fds[0]);
  close(fds[1]);
}

}  // namespace
}  // namespace gpuidle::internal
