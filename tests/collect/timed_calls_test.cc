#include "collect/timed_calls.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <thread>
#include <vector>

#include "collect/buffer_pool.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuidle::internal {
namespace {

using ::testing::SizeIs;

// The chunks handed over, as the collector's decode thread would receive them.
std::vector<uint8_t*>& HandedOver() {
  static auto* chunks = new std::vector<uint8_t*>();
  return *chunks;
}
void KeepChunk(uint8_t* chunk) { HandedOver().push_back(chunk); }

TimedCall Call(uint32_t correlation) {
  TimedCall c;
  c.start_ns = 100 * correlation;
  c.end_ns = c.start_ns + 50;
  c.correlation = correlation;
  c.thread = 7;
  c.cbid = 211;
  return c;
}

std::vector<uint32_t> Correlations(const std::vector<uint8_t*>& chunks) {
  std::vector<uint32_t> out;
  for (const uint8_t* chunk : chunks) {
    for (const TimedCall& c : TimedCallLog::Calls(chunk)) out.push_back(c.correlation);
  }
  return out;
}

class TimedCallLogTest : public ::testing::Test {
 protected:
  void SetUp() override { HandedOver().clear(); }
  void TearDown() override { TimedCallLog::Get().Stop(); }
};

TEST_F(TimedCallLogTest, AFullChunkIsHandedOverAndTheLastOneIsReturnedAtStop) {
  BufferPool pool(TimedCallLog::ChunkBytes(4), 3);
  TimedCallLog& log = TimedCallLog::Get();
  log.Start(&pool, &KeepChunk);
  for (uint32_t c = 1; c <= 6; ++c) log.Append(Call(c));
  ASSERT_THAT(HandedOver(), SizeIs(1));
  EXPECT_THAT(Correlations(HandedOver()), ::testing::ElementsAre(1, 2, 3, 4));
  const std::vector<uint8_t*> held = log.Stop();
  EXPECT_THAT(Correlations(held), ::testing::ElementsAre(5, 6));
  EXPECT_EQ(log.dropped(), 0u);
  const TimedCall first = TimedCallLog::Calls(HandedOver()[0])[0];
  EXPECT_EQ(first.start_ns, 100u);
  EXPECT_EQ(first.end_ns, 150u);
  EXPECT_EQ(first.thread, 7u);
  EXPECT_EQ(first.cbid, 211u);
}

TEST_F(TimedCallLogTest, WithNoChunkLeftCallsAreDroppedAndCounted) {
  BufferPool pool(TimedCallLog::ChunkBytes(4), 2);  // the handed-over chunks are never released
  TimedCallLog& log = TimedCallLog::Get();
  log.Start(&pool, &KeepChunk);
  for (uint32_t c = 1; c <= 11; ++c) log.Append(Call(c));
  EXPECT_EQ(log.dropped(), 3u);
  EXPECT_THAT(Correlations(HandedOver()), ::testing::ElementsAre(1, 2, 3, 4, 5, 6, 7, 8));
  EXPECT_THAT(log.Stop(), ::testing::IsEmpty());
}

TEST_F(TimedCallLogTest, NothingIsTakenWhenStopped) {
  BufferPool pool(TimedCallLog::ChunkBytes(4), 2);
  TimedCallLog& log = TimedCallLog::Get();
  log.Start(&pool, &KeepChunk);
  log.Stop();
  log.Append(Call(1));
  EXPECT_EQ(pool.in_use(), 0u);
  EXPECT_EQ(log.dropped(), 0u);
}

TEST_F(TimedCallLogTest, ANewCollectionNeverWritesIntoTheLastOnesChunk) {
  BufferPool pool(TimedCallLog::ChunkBytes(4), 2);
  TimedCallLog& log = TimedCallLog::Get();
  log.Start(&pool, &KeepChunk);
  log.Append(Call(1));
  std::vector<uint8_t*> first = log.Stop();
  ASSERT_THAT(first, SizeIs(1));
  log.Start(&pool, &KeepChunk);
  log.Append(Call(2));
  std::vector<uint8_t*> second = log.Stop();
  EXPECT_THAT(Correlations(first), ::testing::ElementsAre(1));
  EXPECT_THAT(Correlations(second), ::testing::ElementsAre(2));
}

TEST_F(TimedCallLogTest, AThreadThatEndsHandsItsChunkOver) {
  BufferPool pool(TimedCallLog::ChunkBytes(4), 4);
  TimedCallLog& log = TimedCallLog::Get();
  log.Start(&pool, &KeepChunk);
  std::thread([&] { log.Append(Call(1)); }).join();
  EXPECT_THAT(Correlations(HandedOver()), ::testing::ElementsAre(1));
  EXPECT_THAT(log.Stop(), ::testing::IsEmpty());
}

TEST_F(TimedCallLogTest, AThreadThatEndsAfterStopHandsNothingOver) {
  BufferPool pool(TimedCallLog::ChunkBytes(4), 4);
  TimedCallLog& log = TimedCallLog::Get();
  log.Start(&pool, &KeepChunk);
  std::atomic<bool> appended{false};
  std::atomic<bool> stopped{false};
  std::thread thread([&] {
    log.Append(Call(1));
    appended = true;
    while (!stopped) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  while (!appended) std::this_thread::yield();
  EXPECT_THAT(Correlations(log.Stop()), ::testing::ElementsAre(1));
  stopped = true;
  thread.join();
  EXPECT_THAT(HandedOver(), ::testing::IsEmpty()) << "the collector has it already";
}

// Makes timed calls from its destructor, which runs after the log's own per-thread state is
// gone (constructed first, destroyed last), as a program's thread_local or static destructors
// calling CUDA at thread exit do.
struct CallsAtThreadExit {
  TimedCallLog* log = nullptr;
  ~CallsAtThreadExit() {
    if (log == nullptr) return;
    for (uint32_t c = 100; c < 110; ++c) log->Append(Call(c));
  }
};

TEST_F(TimedCallLogTest, CallsAfterTheThreadsChunkWasHandedOverAreDropped) {
  BufferPool pool(TimedCallLog::ChunkBytes(4), 4);
  TimedCallLog& log = TimedCallLog::Get();
  log.Start(&pool, &KeepChunk);
  std::thread([&log] {
    static thread_local CallsAtThreadExit late;
    late.log = &log;
    log.Append(Call(1));
  }).join();
  EXPECT_THAT(Correlations(HandedOver()), ::testing::ElementsAre(1)) << "handed over once";
  EXPECT_THAT(log.Stop(), ::testing::IsEmpty());
  EXPECT_EQ(pool.in_use(), 1u) << "no chunk taken after the thread's end";
}

TEST_F(TimedCallLogTest, ThreadsWriteIntoChunksOfTheirOwn) {
  BufferPool pool(TimedCallLog::ChunkBytes(64), 64);
  TimedCallLog& log = TimedCallLog::Get();
  log.Start(&pool, &KeepChunk);
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < 4; ++t) {
    threads.emplace_back([&log, t] {
      for (uint32_t i = 0; i < 100; ++i) log.Append(Call(t * 1000 + i));
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<uint8_t*> all = HandedOver();
  for (uint8_t* chunk : log.Stop()) all.push_back(chunk);
  std::vector<uint32_t> got = Correlations(all);
  EXPECT_THAT(got, SizeIs(400));
  std::sort(got.begin(), got.end());
  EXPECT_EQ(std::adjacent_find(got.begin(), got.end()), got.end()) << "no call twice";
  EXPECT_EQ(log.dropped(), 0u);
}

// A hand-over that blocks (holding the log's lock, as Replace calls it) until released.
std::atomic<bool> handing_over{false};
std::atomic<bool> release_hand_over{false};
void BlockingKeep(uint8_t* chunk) {
  handing_over = true;
  while (!release_hand_over) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  KeepChunk(chunk);
}

TEST_F(TimedCallLogTest, AForkedChildExitsThoughAParentThreadHeldTheLock) {
  BufferPool pool(TimedCallLog::ChunkBytes(1), 8);
  TimedCallLog& log = TimedCallLog::Get();
  handing_over = false;
  release_hand_over = false;
  log.Start(&pool, &BlockingKeep);
  log.Append(Call(1));  // this thread holds a chunk of this collection
  std::thread holder([&log] {
    log.Append(Call(2));
    log.Append(Call(3));  // full: hands over, and blocks with the lock held
  });
  while (!handing_over) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const pid_t child = fork();
  if (child == 0) {
    alarm(5);                // a deadlock ends in SIGALRM, which the parent sees
    log.AbandonAfterFork();  // what the collector's fork handler does
    log.Append(Call(4));
    std::exit(log.Stop().empty() ? 0 : 3);  // exit() runs this thread's chunk destructor
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  release_hand_over = true;
  holder.join();
  EXPECT_TRUE(WIFEXITED(status)) << "the child did not exit (signal " << WTERMSIG(status) << ")";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace gpuidle::internal
