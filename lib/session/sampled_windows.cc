#include "session/sampled_windows.h"

#include <unistd.h>

#include <algorithm>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "collect/clock.h"
#include "core/atomic_file.h"
#include "core/log.h"
#include "core/output_path.h"
#include "gpuidle/analyze.h"
#include "model/report_formats.h"
#include "report/prometheus_writer.h"

namespace gpuidle::internal {
namespace {

// Without sampling, summaries and metrics cut the collection into windows of this length (or of
// the summary period), back to back: nothing is left out, and memory stays flat.
constexpr int64_t kDefaultWindowNs = 60'000'000'000;

std::chrono::nanoseconds Ns(int64_t ns) { return std::chrono::nanoseconds(ns); }

}  // namespace

std::unique_ptr<SampledWindows> SampledWindows::Plan(const ProfilerOptions& o) {
  const bool sampled = o.sample_window_ns > 0;
  if (!sampled && o.summary_every_ns == 0 && o.metrics_path.empty() && o.metrics_port == 0) {
    return nullptr;
  }
  std::unique_ptr<SampledWindows> w(new SampledWindows(o));
  const int64_t back_to_back = o.summary_every_ns > 0 ? o.summary_every_ns : kDefaultWindowNs;
  w->window_ = Ns(sampled ? o.sample_window_ns : back_to_back);
  w->first_window_ =
      sampled && o.sample_first_window_ns > 0 ? Ns(o.sample_first_window_ns) : w->window_;
  w->period_ = Ns(sampled ? o.sample_period_ns : back_to_back);
  w->summary_every_ = Ns(o.summary_every_ns);
  if (sampled) {
    w->aggregate_.SetPlan(w->first_window_.count(), w->window_.count(), w->period_.count());
  }
  w->opened_at_ = Clock::now();
  w->opened_at_ns_ = internal::TimelineNowNs();
  w->first_opened_at_ = w->opened_at_;  // the collection running now is the first window
  w->first_opened_at_ns_ = w->opened_at_ns_;
  w->next_summary_ = w->opened_at_ + w->summary_every_;
  const ProcessIdentity id = CurrentProcessIdentity();
  auto expand = [&](const std::string& pattern, const char* what) -> std::string {
    if (pattern.empty()) return "";
    absl::StatusOr<std::string> path = ExpandOutputPath(pattern, id);
    if (!path.ok()) Warn(absl::StrCat(what, " not written: ", path.status().message()));
    return path.ok() ? *path : "";
  };
  w->summary_path_ = expand(o.summary_path, "summaries");
  // The default partial report never replaces a file it did not write (a killed job's partial
  // report): a name with the pid added, as the report's own.
  for (int attempt = 1; IsPartialReport(o) && !w->summary_path_.empty() &&
                        ::access(w->summary_path_.c_str(), F_OK) == 0 && attempt < 100;
       ++attempt) {
    w->summary_path_ = AlternativeOutputPath(expand(o.summary_path, "summaries"), id.pid, attempt);
  }
  w->metrics_path_ = expand(o.metrics_path, "metrics");
  if (o.metrics_port > 0) {
    // The ranks of one host each take their own port.
    const int port = o.metrics_port + IntFromEnvironment("LOCAL_RANK").value_or(0);
    absl::StatusOr<std::unique_ptr<MetricsServer>> server = MetricsServer::Start(port);
    if (server.ok()) {
      w->metrics_ = *std::move(server);
    } else {
      Warn(absl::StrCat("metrics not served on 127.0.0.1:", port, ": ", server.status().message()));
    }
  }
  return w;
}

bool SampledWindows::StartThread(WindowedCollection* collection, std::mutex* mu) {
  try {
    thread_ = std::thread(&SampledWindows::Run, this, collection, mu);
    return true;
  } catch (const std::system_error& e) {
    // No thread: the collection goes on unsampled, as if nothing had been asked.
    Warn(absl::StrCat("no thread for the sampled collection (", e.what(),
                      "); recording everything instead"));
    return false;
  }
}

void SampledWindows::StopThread(std::unique_lock<std::mutex>& lock) {
  if (!thread_.joinable()) return;
  // The thread takes the lock to close and open windows: joined without it.
  stop_ = true;
  wake_.notify_all();
  std::thread thread = std::move(thread_);
  lock.unlock();
  thread.join();
  lock.lock();
}

int64_t SampledWindows::TimelineNowNs() const {
  return first_opened_at_ns_ +
         std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - first_opened_at_)
             .count();
}

void SampledWindows::Run(WindowedCollection* collection, std::mutex* mu) {
  std::unique_lock<std::mutex> lock(*mu);
  while (!stop_) {
    const bool open = collection->Recording();
    const Clock::duration window = aggregate_.windows() == 0 ? first_window_ : window_;
    Clock::time_point next = open ? opened_at_ + window : opened_at_ + period_;
    if (failed_) next = Clock::time_point::max();
    if (summary_every_.count() > 0) next = std::min(next, next_summary_);
    wake_.wait_until(lock, next, [&] { return stop_; });
    if (stop_) break;
    const Clock::time_point now = Clock::now();
    bool closed = false;
    if (open && now >= opened_at_ + window) {
      const bool back_to_back = window_ == period_;
      // After a longer first window, the next opens a pause (period - window) later.
      if (window != window_) opened_at_ = now - window_;
      // Back to back, CUPTI stays attached: the next window opens at once.
      CloseWindow(collection,
                  back_to_back ? CuptiAfterStop::kStayAttached : CuptiAfterStop::kDetach);
      closed = true;
      if (back_to_back) {
        opened_at_ = now;
        OpenWindow(collection);
      }
    } else if (!open && !failed_ && now >= opened_at_ + period_) {
      // Periods missed meanwhile (a long analysis) are skipped, not caught up.
      while (opened_at_ + period_ <= now) opened_at_ += period_;
      OpenWindow(collection);
    }
    const bool summary_due = summary_every_.count() > 0 && now >= next_summary_;
    if (summary_due) {
      while (next_summary_ <= now) next_summary_ += summary_every_;
    }
    if (closed || summary_due) {
      aggregate_.CoverUntil(TimelineNowNs());
      Publish(summary_due);
    }
  }
}

void SampledWindows::CloseWindow(WindowedCollection* collection, CuptiAfterStop after) {
  const int64_t end_ns = internal::TimelineNowNs();  // CUPTI's clock, read while it is attached
  bool gpu_work = false;
  absl::StatusOr<std::shared_ptr<CollectionResult>> closed =
      collection->CloseWindow(after, aggregate_.WindowOptions(), &gpu_work);
  gpu_work_ = gpu_work_ || gpu_work;
  if (!closed.ok() || !(*closed)->report) {
    aggregate_.Add(opened_at_ns_, end_ns, nullptr);
    return;
  }
  aggregate_.Add(opened_at_ns_, end_ns, &*(*closed)->report);
  last_ = *std::move(closed);
}

void SampledWindows::OpenWindow(WindowedCollection* collection) {
  if (absl::Status s = collection->OpenWindow(); !s.ok()) {
    // Another tool took CUPTI between windows, or the GPU is gone: the report covers the
    // windows so far.
    Warn(absl::StrCat("sampled collection: window ", aggregate_.windows() + 1, " could not start (",
                      s.message(), "); the report covers ", aggregate_.windows(), " windows"));
    failed_ = true;
    return;
  }
  opened_at_ns_ = internal::TimelineNowNs();
}

SampledWindows::Outcome SampledWindows::Finish(WindowedCollection* collection,
                                               CuptiAfterStop after) {
  if (collection->Recording()) CloseWindow(collection, after);
  // The run went on to here: time after the last window is untraced, and the report says so.
  aggregate_.CoverUntil(TimelineNowNs());
  // The summary file ends with the whole collection's report (stderr gets it from the session
  // anyway); the partial report is removed once the whole one is written.
  Outcome outcome;
  outcome.partial_report = IsPartialReport(options_) ? summary_path_ : "";
  Publish(/*summary=*/!summary_path_.empty() && outcome.partial_report.empty());
  outcome.last = std::move(last_);
  outcome.report = aggregate_.Result();
  outcome.gpu_work = gpu_work_;
  return outcome;
}

void SampledWindows::Publish(bool summary) {
  if (!summary && metrics_ == nullptr && metrics_path_.empty()) return;
  // Metrics need no step rows: only a summary copies them.
  const std::optional<Report> report = aggregate_.Result(/*with_steps=*/summary);
  if (!report) return;
  if (metrics_ != nullptr || !metrics_path_.empty()) {
    const ProcessIdentity id = CurrentProcessIdentity();
    const std::string text = FormatPrometheusMetrics(
        *report, MetricsLabels{id.host, id.rank_known ? id.rank : "", absl::StrCat(id.pid)});
    if (metrics_ != nullptr) metrics_->Publish(text);
    if (!metrics_path_.empty()) {
      if (absl::Status s = WriteFileAtomically(metrics_path_, text); !s.ok()) {
        Warn(absl::StrCat("metrics file not written (no more tries): ", s.message()));
        metrics_path_.clear();
      }
    }
  }
  if (!summary) return;
  if (summary_path_.empty()) {
    if (options_.print_summary) {
      absl::StatusOr<std::string> text = StderrSummary(*report, options_);
      if (text.ok()) WriteStderrLine("gpuidle: summary so far\n", *text);
    }
    return;
  }
  absl::StatusOr<std::string> text = FormatReport(*report, FormatForPath(summary_path_));
  absl::Status s = text.ok() ? WriteFileAtomically(summary_path_, *text) : text.status();
  if (!s.ok()) {
    Warn(absl::StrCat("summary file not written (no more tries): ", s.message()));
    summary_path_.clear();
  }
}

void SampledWindows::AbandonAfterFork() {
  if (metrics_ != nullptr) metrics_->AbandonAfterFork();
}

}  // namespace gpuidle::internal
