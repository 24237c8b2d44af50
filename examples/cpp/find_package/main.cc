// Uses an installed gpuidle: starts the live profiler (an error without a GPU), analyses the
// trace files given on the command line and prints the summary.
//
//   idle_report trace.json.gz [more ranks...]
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gpuidle/analyze.h"
#include "gpuidle/profiler.h"
#include "gpuidle/report.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " TRACE.json[.gz]...\n";
    return 2;
  }
  // Live collection of this process's GPU timeline. Without a GPU, CUPTI or with CUPTI owned
  // by another tool, Start() returns an error, prints one warning and gpuidle stays inert: the
  // program runs on as usual.
  gpuidle::ProfilerOptions live;
  live.print_summary = false;
  live.analysis.launch_gap_max_ns = 1'000'000;
  gpuidle::Profiler profiler(live);
  absl::Status started = profiler.Start();
  std::cout << "live profiler: " << (started.ok() ? "collecting" : started.ToString()) << "\n";

  std::vector<std::string> paths(argv + 1, argv + argc);
  absl::StatusOr<gpuidle::Report> report = gpuidle::AnalyzeTraceFiles(paths, live.analysis);
  if (!report.ok()) {
    std::cerr << report.status() << "\n";
    return 1;
  }
  absl::StatusOr<std::string> text = gpuidle::FormatReport(*report, "text");
  if (!text.ok()) {
    std::cerr << text.status() << "\n";
    return 1;
  }
  std::cout << *text;
  for (const gpuidle::DeviceReport& d : report->devices) {
    std::cout << "GPU " << d.device << ": " << d.idle.CauseNs(gpuidle::Cause::kSyncBound) / 1e6
              << " ms sync-bound of " << d.idle_ns / 1e6 << " ms idle\n";
  }
  if (profiler.collecting()) {
    // Nothing ran on the GPU here; a real program would have trained in between.
    if (absl::Status stopped = profiler.Stop(); !stopped.ok()) std::cerr << stopped << "\n";
  }
  return 0;
}
