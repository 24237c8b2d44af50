#include "collect/decode_worker.h"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuidle::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(DecodeWorker, DecodesEveryPieceOfWorkInOrderOnItsOwnThread) {
  DecodeWorker worker;
  std::mutex mu;
  std::vector<size_t> decoded;
  std::vector<std::thread::id> threads;
  ASSERT_TRUE(worker
                  .Start([&](const DecodeWorker::Work& w) {
                    std::lock_guard<std::mutex> lock(mu);
                    decoded.push_back(w.valid_bytes);
                    threads.push_back(std::this_thread::get_id());
                  })
                  .ok());
  for (size_t i = 1; i <= 3; ++i) EXPECT_TRUE(worker.Push({nullptr, i, false}));
  worker.Stop();  // what was queued is decoded before Stop returns
  EXPECT_THAT(decoded, ElementsAre(1u, 2u, 3u));
  for (std::thread::id id : threads) EXPECT_NE(id, std::this_thread::get_id());
}

TEST(DecodeWorker, RefusesWorkBeforeItStartsAndAfterItStops) {
  DecodeWorker worker;
  std::atomic<int> decoded{0};
  EXPECT_FALSE(worker.Push({nullptr, 1, false}));
  ASSERT_TRUE(worker.Start([&](const DecodeWorker::Work&) { ++decoded; }).ok());
  worker.Stop();
  EXPECT_FALSE(worker.Push({nullptr, 1, true}));
  EXPECT_EQ(decoded.load(), 0);
}

TEST(DecodeWorker, CanStartAgainAfterAStop) {
  DecodeWorker worker;
  std::vector<bool> kinds;
  for (bool timed_calls : {false, true}) {
    ASSERT_TRUE(
        worker.Start([&](const DecodeWorker::Work& w) { kinds.push_back(w.timed_calls); }).ok());
    EXPECT_TRUE(worker.Push({nullptr, 0, timed_calls}));
    worker.Stop();
  }
  EXPECT_THAT(kinds, ElementsAre(false, true));
}

TEST(DecodeWorker, StoppingAWorkerThatNeverStartedIsHarmless) {
  DecodeWorker worker;
  worker.Stop();
  std::vector<int> none;
  EXPECT_THAT(none, IsEmpty());
  EXPECT_FALSE(worker.Push({nullptr, 0, false}));
}

}  // namespace
}  // namespace gpuidle::internal
