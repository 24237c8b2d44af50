// StringTable: the timeline's interned names. Ids are stable and dense, and the views it hands
// out stay valid while the table grows or moves (the analysis keeps them for a whole report).
#include "model/string_table.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"

namespace gpuidle::internal {
namespace {

TEST(StringTableTest, ANewTableHoldsOnlyTheEmptyStringAsIdZero) {
  const StringTable table;
  EXPECT_EQ(table.size(), 1u);
  EXPECT_EQ(StringTable::kEmpty, 0u);
  EXPECT_EQ(table.Get(StringTable::kEmpty), "");
}

TEST(StringTableTest, InterningTheEmptyStringGivesIdZero) {
  StringTable table;
  EXPECT_EQ(table.Intern(""), StringTable::kEmpty);
  EXPECT_EQ(table.Intern(absl::string_view()), StringTable::kEmpty);
  EXPECT_EQ(table.size(), 1u);
}

TEST(StringTableTest, EqualStringsShareOneIdAndNewOnesGetTheNextId) {
  StringTable table;
  const StringId kernel = table.Intern("kernel");
  const StringId launch = table.Intern("cudaLaunchKernel");
  EXPECT_EQ(kernel, 1u);
  EXPECT_EQ(launch, 2u);
  EXPECT_EQ(table.Intern(std::string("kernel")), kernel);
  EXPECT_EQ(table.size(), 3u);
  EXPECT_EQ(table.Get(kernel), "kernel");
  EXPECT_EQ(table.Get(launch), "cudaLaunchKernel");
}

TEST(StringTableTest, NamesThatDifferOnlyInCaseOrAfterANulByteAreDistinct) {
  StringTable table;
  const std::string with_nul("a\0b", 3);
  const StringId a = table.Intern("a");
  const StringId upper = table.Intern("A");
  const StringId nul = table.Intern(with_nul);
  EXPECT_NE(a, upper);
  EXPECT_NE(a, nul);
  EXPECT_EQ(table.Get(nul), absl::string_view(with_nul));
  EXPECT_EQ(table.Get(nul).size(), 3u);
}

TEST(StringTableTest, KeepsItsOwnCopyOfTheInternedText) {
  StringTable table;
  std::string buffer = "aten::mm";
  const StringId id = table.Intern(buffer);
  buffer.assign("overwritten by the caller");
  EXPECT_EQ(table.Get(id), "aten::mm");
  EXPECT_EQ(table.Intern("aten::mm"), id);
}

// Short strings live inside std::string itself: a table that moved its strings while growing
// would leave these views dangling.
TEST(StringTableTest, ViewsHandedOutStayValidWhileTheTableGrows) {
  StringTable table;
  const absl::string_view shortname = table.Get(table.Intern("mm"));
  const absl::string_view longname =
      table.Get(table.Intern("void at::native::vectorized_elementwise_kernel<4>"));
  for (int i = 0; i < 100'000; ++i) table.Intern(absl::StrCat("kernel_", i));
  EXPECT_EQ(shortname, "mm");
  EXPECT_EQ(longname, "void at::native::vectorized_elementwise_kernel<4>");
  EXPECT_EQ(table.size(), 100'003u);
  EXPECT_EQ(table.Get(table.Intern("kernel_99999")), "kernel_99999");
  EXPECT_EQ(table.Intern("mm"), 1u);
}

TEST(StringTableTest, AMovedTableKeepsItsIdsAndViews) {
  StringTable table;
  const StringId id = table.Intern("ProfilerStep#3");
  const absl::string_view view = table.Get(id);
  StringTable moved(std::move(table));
  EXPECT_EQ(moved.Get(id), "ProfilerStep#3");
  EXPECT_EQ(view, "ProfilerStep#3");
  EXPECT_EQ(moved.Intern("ProfilerStep#3"), id);
  EXPECT_EQ(moved.Intern("ProfilerStep#4"), id + 1);

  StringTable assigned;
  assigned.Intern("something else");
  assigned = std::move(moved);
  EXPECT_EQ(assigned.size(), 3u);
  EXPECT_EQ(assigned.Intern("ProfilerStep#3"), id);
}

}  // namespace
}  // namespace gpuidle::internal
