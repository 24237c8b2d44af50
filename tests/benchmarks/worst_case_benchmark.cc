// Issue 29's worst cases: what merging two reports costs when each report is at most
// `--max-bytes` (default 1 MB) and spends all of it on one dimension the merge loops over.
// Target: no such merge takes more than a second.
//
//   kinds     two ranks on two hosts (offsets found by votes), 4,096 collective rows each, spread
//             over as many collective kinds as fit (thousands)
//   devices   two ranks with as many devices each as fit
//   steps     two ranks with as many step rows as fit (up to Report::kMaxStepRows)
//   gaps      two ranks with as many longest-gap rows as fit
//   offenders two ranks with as many offender rows as fit, all of different call sites
//   ranks     `--ranks` (default 1024) small one-device reports, merged at once
//
// Then the analysis of generated timelines of shapes that made loops superlinear before issue 29
// (docs/RELIABILITY.md, "Complexity budget"), each at n and 4n events: the time of
// internal::Analyze, and its ratio (about 4 for a linear or n log n loop, 16 for a quadratic one):
//
//   staircase  n framework ops on one thread, each starting inside the last and ending after it
//   long-copy  one host-to-device copy as long as the run, then n short copies and queued kernels
//   dynamo     n nested "(dynamo_timed)" compilation ranges over kernels with gaps
//   steps      n steps of two kernels each
//   devices    n / 256 devices (at most 1024), 256 kernels each
//
// Each case is written as JSON by gpuidle::FormatReport, then read and merged by
// gpuidle::AnalyzeTraceFiles in a child process (fork): the wall time of the child's read and
// merge (median of --rounds, default 3) and its peak RSS (wait4). Prints one row per case and
// exits 1 if a merge fails.
//
//   build/bin/worst_case_benchmark [--max-bytes N] [--rounds R] [--ranks N] [--events N]
//                                  [--only NAME] [--keep DIR]
//
// --events sets the timelines' n (default 50,000); --only runs one case or shape.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "analysis/analyze.h"
#include "gpuidle/analyze.h"
#include "gpuidle/report.h"
#include "model/timeline.h"
#include "testing/rank_reports.h"
#include "testing/timeline_builder.h"

namespace {

using gpuidle::Report;
using gpuidle::testing::JobSpec;

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "worst_case_benchmark: FAILED: %s\n", what.c_str());
  std::exit(1);
}

std::string Json(const Report& r) {
  absl::StatusOr<std::string> json = gpuidle::FormatReport(r, "json");
  if (!json.ok()) Fail(json.status().ToString());
  return *json;
}

// A pair of ranks (0 on host 0, 1 on host 1 an hour ahead), 4,096 collective rows each.
std::vector<Report> Pair(int kinds) {
  JobSpec s;
  s.world_size = 2;
  s.ranks_per_host = 1;
  s.steps = 1024;
  s.collectives_per_step = 4;
  s.host_offset_ns = 3'600'000'000'000;
  s.kinds = kinds;
  s.straggler = 1;
  return gpuidle::testing::JobReports(s);
}

// The largest n in [1, limit] for which make(n) writes reports of at most max_bytes (by
// bisection: the size grows with n).
int Largest(int limit, size_t max_bytes, const std::function<std::vector<Report>(int)>& make) {
  const auto fits = [&](int n) {
    for (const Report& r : make(n)) {
      if (Json(r).size() > max_bytes) return false;
    }
    return true;
  };
  if (fits(limit)) return limit;
  int lo = 1, hi = limit;  // fits(lo), !fits(hi)
  if (!fits(lo)) Fail("not even one row fits");
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

std::vector<Report> ManyDevices(int devices) {
  std::vector<Report> pair = Pair(1);
  for (Report& r : pair) {
    r.devices.front().collective_timings.resize(64);  // room for devices
    const gpuidle::DeviceReport one = r.devices.front();
    r.devices.clear();
    for (int d = 0; d < devices; ++d) {
      r.devices.push_back(one);
      r.devices.back().device = d;
    }
  }
  return pair;
}

std::vector<Report> ManySteps(int steps) {
  std::vector<Report> pair = Pair(1);
  for (Report& r : pair) {
    const gpuidle::DeviceReport& d = r.devices.front();
    const int64_t step_ns = (d.steady_end_ns - d.steady_start_ns) / steps;
    for (int i = 0; i < steps; ++i) {
      gpuidle::StepReport& s = r.steps.emplace_back();
      s.rank = d.rank;
      s.device = d.device;
      s.name = absl::StrCat("ProfilerStep#", i);
      s.start_ns = d.steady_start_ns + i * step_ns;
      s.end_ns = s.start_ns + step_ns;
      s.idle[gpuidle::Subcause::kHost] = step_ns / 10;
      s.busy_ns = step_ns - step_ns / 10;
    }
  }
  return pair;
}

std::vector<Report> ManyGaps(int gaps) {
  std::vector<Report> pair = Pair(1);
  for (Report& r : pair) {
    const gpuidle::DeviceReport& d = r.devices.front();
    for (int i = 0; i < gaps; ++i) {
      gpuidle::GapRecord& g = r.longest_gaps.emplace_back();
      g.rank = d.rank;
      g.device = d.device;
      g.start_ns = d.steady_start_ns + i * int64_t{1'000'000};
      g.end_ns = g.start_ns + 500'000 - i;
      g.subcause = gpuidle::Subcause::kHost;
      g.next_op = "ampere_sgemm_128x64_nn";
      g.evidence = "no CUDA call for 500 us";
      g.call_site = absl::StrCat("train.py(", i, "): step");
    }
  }
  return pair;
}

std::vector<Report> ManyOffenders(int offenders) {
  std::vector<Report> pair = Pair(1);
  for (Report& r : pair) {
    for (int i = 0; i < offenders; ++i) {
      r.offenders.push_back({gpuidle::Subcause::kHostSync, "cudaStreamSynchronize",
                             absl::StrCat("aten::item at train.py(", i, ")"), 1'000'000 - i, 3});
    }
  }
  return pair;
}

struct Result {
  double seconds = 0;
  int64_t peak_rss_kb = 0;
  std::string error;
};

// Reads and merges `paths` in a child process: its wall time and peak RSS.
Result MergeInChild(const std::vector<std::string>& paths) {
  int fds[2];
  if (pipe(fds) != 0) Fail("pipe");
  const auto start = std::chrono::steady_clock::now();
  const pid_t child = fork();
  if (child < 0) Fail("fork");
  if (child == 0) {
    close(fds[0]);
    absl::StatusOr<Report> merged = gpuidle::AnalyzeTraceFiles(paths);
    const std::string message = merged.ok() ? "" : merged.status().ToString();
    if (!message.empty()) (void)!write(fds[1], message.data(), message.size());
    _exit(merged.ok() ? 0 : 1);
  }
  close(fds[1]);
  Result result;
  char buffer[512];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof(buffer))) > 0;) result.error.append(buffer, n);
  close(fds[0]);
  int status = 0;
  rusage usage{};
  if (wait4(child, &status, 0, &usage) != child) Fail("wait4");
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.peak_rss_kb = usage.ru_maxrss;
  if (result.error.empty() && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
    result.error = "the child failed";
  }
  return result;
}

using gpuidle::internal::Timeline;
using gpuidle::testing::TimelineBuilder;

// Kernels launched 5 us apart on thread 1 with a 20 us gap every fourth: idle pieces to attribute.
void KernelsWithGaps(TimelineBuilder& b, int n, double from_us) {
  double t = from_us;
  for (int i = 0; i < n; ++i) {
    b.Launch(1, t, t + 2).Kernel(t + 3, t + 8);
    t += i % 4 == 3 ? 30 : 10;
  }
}

Timeline Staircase(int n) {
  TimelineBuilder b;
  for (int i = 0; i < n; ++i) b.Op(1, i * 10.0, i * 10.0 + 1e7, "aten::op");
  KernelsWithGaps(b, n, 1);
  return b.Build();
}

Timeline LongCopy(int n) {
  TimelineBuilder b;
  b.CopyCall(1, 0, 1).Copy(1, 1e8, gpuidle::internal::CopyKind::kHtoD);
  double t = 10;
  for (int i = 0; i < n; ++i) {
    b.CopyCall(1, t, t + 1).Copy(t + 1, t + 2, gpuidle::internal::CopyKind::kHtoD);
    b.Launch(1, t + 2, t + 3).Kernel(t + 20, t + 25);
    t += 40;
  }
  return b.Build();
}

Timeline Dynamo(int n) {
  TimelineBuilder b;
  for (int i = 0; i < n; ++i) {
    b.Range(1, i * 5.0, n * 10.0 + 1e4 - i * 5.0, gpuidle::internal::RangeKind::kUser,
            "compile_fx (dynamo_timed)");
  }
  KernelsWithGaps(b, n, 1);
  return b.Build();
}

Timeline Steps(int n) {
  TimelineBuilder b;
  for (int i = 0; i < n; ++i) {
    const double t = i * 40.0;
    b.Step(1, t, t + 40, "ProfilerStep#" + std::to_string(i));
    b.Launch(1, t + 1, t + 2)
        .Kernel(t + 3, t + 10)
        .Launch(1, t + 20, t + 21)
        .Kernel(t + 22, t + 30);
  }
  return b.Build();
}

Timeline Devices(int n) {
  TimelineBuilder b;
  const int devices = std::min(1024, std::max(1, n / 256));
  for (int d = 0; d < devices; ++d) {
    b.Device(d);
    for (int i = 0; i < 256; ++i)
      b.Launch(1, i * 10.0, i * 10.0 + 1).Kernel(i * 10.0 + 2, i * 10.0 + 7);
  }
  return b.Build();
}

double AnalyzeSeconds(const Timeline& t) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<Report> r = gpuidle::internal::Analyze(t, gpuidle::AnalysisOptions{});
  if (!r.ok()) Fail(r.status().ToString());
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  size_t max_bytes = 1'000'000;
  int rounds = 3;
  int ranks = 1024;
  int n = 50'000;
  std::string keep, only;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    if (arg == "--max-bytes" && value && absl::SimpleAtoi(value, &max_bytes)) {
      ++i;
    } else if (arg == "--rounds" && value && absl::SimpleAtoi(value, &rounds) && rounds > 0) {
      ++i;
    } else if (arg == "--ranks" && value && absl::SimpleAtoi(value, &ranks) && ranks > 1) {
      ++i;
    } else if (arg == "--events" && value && absl::SimpleAtoi(value, &n) && n > 0) {
      ++i;
    } else if (arg == "--only" && value) {  // one case or shape, by name
      only = value;
      ++i;
    } else if (arg == "--keep" && value) {
      keep = value;
      ++i;
    } else {
      std::fprintf(stderr,
                   "usage: worst_case_benchmark [--max-bytes N] [--rounds R] [--ranks N] "
                   "[--events N] [--only NAME] [--keep DIR]\n");
      return 2;
    }
  }
  const std::string dir = keep.empty()
                              ? absl::StrCat(std::filesystem::temp_directory_path().string(),
                                             "/gpuidle_worst_case_", getpid())
                              : keep;
  std::filesystem::create_directories(dir);

  struct Case {
    std::string name;
    int limit;
    std::function<std::vector<Report>(int)> make;
  };
  const std::vector<Case> cases = {
      {"kinds", 1 << 16, Pair},
      {"devices", 1 << 14, ManyDevices},
      {"steps", static_cast<int>(Report::kMaxStepRows), ManySteps},
      {"gaps", 1 << 16, ManyGaps},
      {"offenders", 1 << 16, ManyOffenders},
  };
  std::printf("worst cases: two reports of at most %zu bytes each, merged (median of %d)\n",
              max_bytes, rounds);
  std::printf("%-10s %8s %12s %10s %12s\n", "case", "n", "report KB", "median s", "peak RSS MB");
  bool failed = false;
  const auto run = [&](const std::string& name, int n, const std::vector<Report>& reports) {
    std::vector<std::string> paths;
    size_t largest = 0;
    for (size_t i = 0; i < reports.size(); ++i) {
      const std::string json = Json(reports[i]);
      largest = std::max(largest, json.size());
      paths.push_back(absl::StrCat(dir, "/", name, "_", i, ".json"));
      std::ofstream(paths.back(), std::ios::binary) << json;
    }
    std::vector<double> times;
    int64_t peak = 0;
    for (int r = 0; r < rounds; ++r) {
      const Result result = MergeInChild(paths);
      if (!result.error.empty()) {
        std::printf("%-10s %8d FAILED: %s\n", name.c_str(), n, result.error.c_str());
        failed = true;
        return;
      }
      times.push_back(result.seconds);
      peak = std::max(peak, result.peak_rss_kb);
    }
    std::sort(times.begin(), times.end());
    std::printf("%-10s %8d %12.0f %10.3f %12.1f\n", name.c_str(), n,
                static_cast<double>(largest) / 1e3, times[times.size() / 2],
                static_cast<double>(peak) / 1e3);
    std::fflush(stdout);
  };
  for (const Case& c : cases) {
    if (!only.empty() && c.name != only) continue;
    const int n = Largest(c.limit, max_bytes, c.make);
    run(c.name, n, c.make(n));
  }
  // Many ranks: small one-device reports of one job, merged at once.
  JobSpec many;
  many.world_size = ranks;
  many.steps = 16;
  many.straggler = ranks / 2 + 1;
  many.host_offset_ns = 3'600'000'000'000;
  if (only.empty() || only == "ranks") run("ranks", ranks, gpuidle::testing::JobReports(many));
  if (keep.empty()) std::filesystem::remove_all(dir);

  std::printf("\nanalysis of generated timelines: n and 4n (median of %d)\n", rounds);
  std::printf("%-10s %10s %10s %10s %8s\n", "shape", "n", "n s", "4n s", "ratio");
  const std::vector<std::pair<std::string, std::function<Timeline(int)>>> shapes = {
      {"staircase", Staircase},
      {"long-copy", LongCopy},
      {"dynamo", Dynamo},
      {"steps", Steps},
      {"devices", Devices}};
  for (const auto& [name, make] : shapes) {
    if (!only.empty() && name != only) continue;
    double at[2] = {0, 0};
    for (int k = 0; k < 2; ++k) {
      const Timeline t = make(k == 0 ? n : 4 * n);
      std::vector<double> times;
      for (int r = 0; r < rounds; ++r) times.push_back(AnalyzeSeconds(t));
      std::sort(times.begin(), times.end());
      at[k] = times[times.size() / 2];
    }
    std::printf("%-10s %10d %10.3f %10.3f %8.1f\n", name.c_str(), n, at[0], at[1],
                at[0] > 0 ? at[1] / at[0] : 0.0);
    std::fflush(stdout);
  }
  return failed ? 1 : 0;
}
