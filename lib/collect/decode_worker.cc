#include "collect/decode_worker.h"

#include <sys/prctl.h>

#include <new>
#include <system_error>
#include <utility>

namespace gpuidle::internal {

absl::Status DecodeWorker::Start(Decode decode) {
  decode_ = std::move(decode);
  {
    std::lock_guard<std::mutex> lock(mu_);
    accepting_ = true;
    stopping_ = false;
  }
  try {
    thread_ = std::thread([this] { Run(); });
  } catch (const std::system_error& e) {
    // Out of threads (ulimit -u, a container's pids limit): gpuidle goes inert.
    std::lock_guard<std::mutex> lock(mu_);
    accepting_ = false;
    return absl::ResourceExhaustedError(std::string("cannot start gpuidle's decode thread: ") +
                                        e.what());
  }
  return absl::OkStatus();
}

bool DecodeWorker::Push(const Work& work) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!accepting_) return false;
  queue_.push_back(work);
  cv_.notify_one();
  return true;
}

void DecodeWorker::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    accepting_ = false;
    stopping_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void DecodeWorker::Run() {
  // Named, so that `top -H` and a benchmark's per-thread CPU time tell gpuidle's cost apart.
  prctl(PR_SET_NAME, "gpuidle-decode", 0, 0, 0);
  for (;;) {
    Work work;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return !queue_.empty() || stopping_; });
      if (queue_.empty()) return;
      work = queue_.front();
      queue_.pop_front();
    }
    decode_(work);
  }
}

void DecodeWorker::AbandonAfterFork() {
  // The parent's thread object is left as it is (never joined or destroyed: detached would
  // touch a thread that does not exist here).
  new (&mu_) std::mutex();
  new (&cv_) std::condition_variable();
  queue_.clear();
  accepting_ = false;
  stopping_ = false;
  new (&thread_) std::thread();
}

}  // namespace gpuidle::internal
