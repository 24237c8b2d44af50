// The process's profiling session: owns the collector's lifetime, turns a stopped collection
// into a report and the configured outputs, and keeps gpuidle harmless in the host process
// (one warning line and inert on any failure; fork children never collect; a collection still
// running at exit is stopped and written by an atexit handler, before CUDA tears down).
#ifndef GPUIDLE_LIB_SESSION_SESSION_H_
#define GPUIDLE_LIB_SESSION_SESSION_H_

#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "collect/collector.h"
#include "gpuidle/profiler.h"
#include "gpuidle/report.h"
#include "model/timeline.h"

namespace gpuidle::internal {

// What a finished collection produced.
struct CollectionResult {
  Timeline timeline;
  std::optional<Report> report;  // nullopt: nothing was recorded
  ProfilerOptions options;
  std::string report_path;  // where the report was written, if it was
  std::string trace_path;   // where the trace was written, if it was
};

// Prints "gpuidle: warning: <message>" as one line on stderr.
void Warn(absl::string_view message);
// Prints "gpuidle: <message>" as one line on stderr.
void Note(absl::string_view message);

class Session {
 public:
  static Session& Get();

  // Starts collecting for owner (a Profiler, or the injection). Prints one warning line and
  // returns the error if gpuidle cannot collect.
  absl::Status Start(const ProfilerOptions& options, const void* owner, absl::string_view how);
  // Stops the collection of owner: analyses, prints the summary, writes the configured outputs.
  // A write failure is warned about and returned, with the result still available. CUPTI is
  // detached unless the program is exiting (kStayAttached), as the exit handler's stop does.
  absl::StatusOr<std::shared_ptr<const CollectionResult>> Stop(
      const void* owner, CuptiAfterStop after = CuptiAfterStop::kDetach);
  bool CollectingFor(const void* owner) const;

  // Writes text to the expanded path pattern without replacing anything; returns the path.
  static absl::StatusOr<std::string> WriteOutput(absl::string_view pattern, absl::string_view text);

 private:
  Session() = default;
  absl::StatusOr<std::shared_ptr<const CollectionResult>> StopLocked(CuptiAfterStop after);
  static void StopAtExit();
  static void AfterForkInChild();

  mutable std::mutex mu_;
  const void* owner_ = nullptr;  // non-null while collecting
  std::string started_by_;       // "the C++ API", "LD_PRELOAD", ...
  ProfilerOptions options_;
  int64_t wall_clock_offset_ns_ = 0;
  bool forked_child_ = false;
  std::set<std::string> warned_;  // refusals already printed
  bool exit_handler_registered_ = false;
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_SESSION_SESSION_H_
