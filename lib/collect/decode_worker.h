// The collector's decode thread: CUPTI's thread (or a flushing thread) queues completed
// activity buffers, application threads queue full chunks of timed calls, and this thread
// decodes them, so that neither ever waits for a translation.
#ifndef GPUIDLE_LIB_COLLECT_DECODE_WORKER_H_
#define GPUIDLE_LIB_COLLECT_DECODE_WORKER_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "absl/status/status.h"

namespace gpuidle::internal {

class DecodeWorker {
 public:
  struct Work {
    uint8_t* buffer;
    size_t valid_bytes;  // of a CUPTI activity buffer; 0 for a chunk of timed calls
    bool timed_calls;
  };
  // Runs on the worker thread, one piece of work at a time; must give the buffer back.
  using Decode = std::function<void(const Work&)>;

  // Starts the thread and accepts work from now. ResourceExhausted when the system cannot
  // create a thread (then nothing is accepted): never an exception.
  absl::Status Start(Decode decode);
  // Queues work; false when not accepting (the caller gives the buffer back). Never decodes on
  // the calling thread. Lock held only to queue.
  bool Push(const Work& work);
  // Stops accepting, lets the thread decode what is queued, joins it. Not from the worker.
  void Stop();
  // In a forked child: forget the queue without taking its lock or joining the parent's
  // thread (neither exists here).
  void AbandonAfterFork();

 private:
  void Run();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Work> queue_;
  bool accepting_ = false;
  bool stopping_ = false;
  std::thread thread_;
  Decode decode_;
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_COLLECT_DECODE_WORKER_H_
