#include "core/out_of_memory.h"

#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"

namespace gpuidle::internal {
namespace {

TEST(OutOfMemoryIsAnError, PassesTheResultThrough) {
  const absl::StatusOr<int> r =
      OutOfMemoryIsAnError("while counting", [] { return absl::StatusOr<int>(7); });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 7);
}

TEST(OutOfMemoryIsAnError, TurnsBadAllocIntoResourceExhausted) {
  const absl::StatusOr<int> r = OutOfMemoryIsAnError(
      "while counting", []() -> absl::StatusOr<int> { throw std::bad_alloc(); });
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(r.status().message(), "out of memory while counting");
}

TEST(OutOfMemoryIsAnError, TurnsAContainerPastItsLimitIntoResourceExhausted) {
  const absl::Status s = OutOfMemoryIsAnError("while growing", []() -> absl::Status {
    std::vector<int> v;
    v.reserve(v.max_size() + 1);  // std::length_error
    return absl::OkStatus();
  });
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(), "out of memory while growing");
}

TEST(OutOfMemoryIsAnErrorWith, BuildsTheMessageOnlyWhenMemoryRanOut) {
  int built = 0;
  const auto message = [&] {
    ++built;
    return std::string("a.json: out of memory while reading it");
  };
  EXPECT_TRUE(OutOfMemoryIsAnErrorWith([] { return absl::OkStatus(); }, message).ok());
  EXPECT_EQ(built, 0);
  const absl::Status s =
      OutOfMemoryIsAnErrorWith([]() -> absl::Status { throw std::bad_alloc(); }, message);
  EXPECT_EQ(built, 1);
  EXPECT_EQ(s.message(), "a.json: out of memory while reading it");
}

}  // namespace
}  // namespace gpuidle::internal
