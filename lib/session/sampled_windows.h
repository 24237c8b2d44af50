// A sampled collection (ProfilerOptions::sample_*, summary_every_ns, the metrics): a thread
// closes and opens the collection's windows on a schedule; each window is analysed as it closes
// and folded into one aggregate, which is published as metrics (a file, the loopback port) and
// periodic summaries (docs/INJECTION.md, "Long jobs"). The session it runs in is reached only
// through WindowedCollection.
#ifndef GPUIDLE_LIB_SESSION_SAMPLED_WINDOWS_H_
#define GPUIDLE_LIB_SESSION_SAMPLED_WINDOWS_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analysis/window_aggregate.h"
#include "collect/collection.h"
#include "gpuidle/options.h"
#include "gpuidle/report.h"
#include "session/metrics_server.h"
#include "session/outputs.h"

namespace gpuidle::internal {

// What the windows need of the collection they cut; called with the collection's lock held.
class WindowedCollection {
 public:
  virtual ~WindowedCollection() = default;
  // Whether a window is open (CUDA activity is being recorded).
  virtual bool Recording() const = 0;
  // Stops recording and analyses what the window recorded with `analysis`, writing nothing;
  // gpu_work says whether it shows GPU work of the process.
  virtual absl::StatusOr<std::shared_ptr<CollectionResult>> CloseWindow(
      CuptiAfterStop after, const AnalysisOptions& analysis, bool* gpu_work) = 0;
  // Starts recording the next window.
  virtual absl::Status OpenWindow() = 0;
};

class SampledWindows {
 public:
  // The windows a collection with these options is cut into, the first open now; nullptr when
  // it asks for none (no sampling, summaries or metrics). Starts the metrics port.
  static std::unique_ptr<SampledWindows> Plan(const ProfilerOptions& options);

  // Starts the thread that closes and opens the windows, locking *mu (the collection's lock)
  // whenever it calls `collection`. False, with a warning, if no thread can be started: the
  // collection then goes on unsampled.
  bool StartThread(WindowedCollection* collection, std::mutex* mu);
  // Stops the thread; `lock` holds the collection's lock and is released while it is joined.
  void StopThread(std::unique_lock<std::mutex>& lock);

  // What the whole collection leaves once its last window is closed.
  struct Outcome {
    std::shared_ptr<CollectionResult> last;  // the last window with a report (the trace's)
    std::optional<Report> report;            // the aggregate of every window
    bool gpu_work = false;
    std::string partial_report;  // the default partial report's path, to remove (or "")
  };
  // At the collection's stop, thread stopped, lock held: closes the open window, covers the
  // time since, publishes the last metrics and summary file.
  Outcome Finish(WindowedCollection* collection, CuptiAfterStop after);

  // In a forked child: the parent's thread and metrics server do not exist here.
  void AbandonAfterFork();

 private:
  using Clock = std::chrono::steady_clock;
  explicit SampledWindows(const ProfilerOptions& options)
      : options_(options), aggregate_(options.analysis) {}
  void Run(WindowedCollection* collection, std::mutex* mu);
  void CloseWindow(WindowedCollection* collection, CuptiAfterStop after);
  void OpenWindow(WindowedCollection* collection);
  // The aggregate so far to the metrics file and port, and as a summary when asked.
  void Publish(bool summary);
  // The timeline's time now, read from the steady clock through the first window's opening on
  // both clocks: CUPTI's clock is not there while it is detached (between windows, at the stop).
  int64_t TimelineNowNs() const;

  const ProfilerOptions options_;
  WindowAggregate aggregate_;
  Clock::duration first_window_{}, window_{}, period_{}, summary_every_{};
  Clock::time_point opened_at_, next_summary_;
  int64_t opened_at_ns_ = 0;  // on the timeline's clock
  Clock::time_point first_opened_at_;
  int64_t first_opened_at_ns_ = 0;
  std::shared_ptr<CollectionResult> last_;
  bool gpu_work_ = false;
  bool stop_ = false;
  bool failed_ = false;  // a window could not be opened: no more are
  std::condition_variable wake_;
  std::thread thread_;
  std::string summary_path_, metrics_path_;  // placeholders expanded
  std::unique_ptr<MetricsServer> metrics_;
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_SESSION_SAMPLED_WINDOWS_H_
