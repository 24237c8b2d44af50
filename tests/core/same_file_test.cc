// core/same_file.h: one file under two names, two files, and paths that cannot be looked at.
#include "core/same_file.h"

#include <unistd.h>

#include <string>

#include "gtest/gtest.h"
#include "testing/temp_dir.h"

namespace gpuidle::internal {
namespace {

using ::gpuidle::testing::TempDir;

TEST(SameFile, TellsOneFileUnderTwoNamesFromTwoFiles) {
  TempDir dir;
  const std::string a = dir.Write("a.so", "x");
  const std::string b = dir.Write("b.so", "x");  // the same bytes, another file
  const std::string link = dir.path() + "/link.so";
  const std::string hard = dir.path() + "/hard.so";
  ASSERT_EQ(::symlink(a.c_str(), link.c_str()), 0);
  ASSERT_EQ(::link(a.c_str(), hard.c_str()), 0);
  EXPECT_TRUE(SameFile(a, a));
  EXPECT_TRUE(SameFile(a, link));
  EXPECT_TRUE(SameFile(hard, a));
  EXPECT_TRUE(SameFile(a, dir.path() + "/./a.so"));
  EXPECT_FALSE(SameFile(a, b));
  EXPECT_FALSE(SameFile(a, dir.path() + "/missing.so"));
  EXPECT_FALSE(SameFile(dir.path() + "/missing.so", dir.path() + "/other-missing.so"));
  // One spelling of a path names one file, looked at or not.
  EXPECT_TRUE(SameFile(dir.path() + "/missing.so", dir.path() + "/missing.so"));
}

}  // namespace
}  // namespace gpuidle::internal
