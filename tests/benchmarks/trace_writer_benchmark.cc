// trace_writer_benchmark: what writing a gpuidle trace costs on a synthetic long run
// (docs/PERFORMANCE.md, "Writing a trace").
//
//   trace_writer_benchmark [--ops N] [--out PATH] [--max-gaps N]
//
// Builds one device's timeline of N kernels (default 1,000,000), each launched by a call on one
// thread, with a data wait before every 10th launch and a sync after every 7th, so that every
// kernel ends a gap and the gaps have several causes. Analyses it, then writes the trace with
// the report's gaps to PATH (default ./trace_writer_benchmark.json) twice: streamed to the file
// (WriteGpuidleTrace), and formatted as one string first (FormatGpuidleTrace, what the writer
// did before it streamed). For each it prints the time and the growth of the peak resident
// memory over the resident memory before writing (the peak is reset in between through
// /proc/self/clear_refs).
#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>

#include "analysis/analyze.h"
#include "core/output_file.h"
#include "gpuidle/options.h"
#include "model/timeline.h"
#include "report/trace_writer.h"

namespace {

using gpuidle::internal::CallCategory;
using gpuidle::internal::DeviceOp;
using gpuidle::internal::HostCall;
using gpuidle::internal::Range;
using gpuidle::internal::RangeKind;
using gpuidle::internal::Timeline;

// From /proc/self/status, in kB.
int64_t StatusKb(const char* key) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(key, 0) == 0) return std::atoll(line.c_str() + std::strlen(key));
  }
  return -1;
}

// Makes VmHWM (peak resident) start again from the current resident size.
void ResetPeak() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
}

Timeline Synthetic(int64_t ops) {
  Timeline t;
  t.info.pid = 4242;
  t.info.host = "bench";
  t.info.visible_devices = {0};
  t.info.visible_device_names = {"NVIDIA H200"};
  t.devices.emplace_back().device = 0;
  t.devices[0].name = "NVIDIA H200";
  const auto launch = t.strings.Intern("cudaLaunchKernel");
  const auto sync = t.strings.Intern("cudaStreamSynchronize");
  const auto data = t.strings.Intern("gpuidle.data");
  const auto kernel = t.strings.Intern("void gemm_kernel<float, 128, 128>(float const*, float*)");
  t.devices[0].ops.reserve(static_cast<size_t>(ops));
  t.calls.reserve(static_cast<size_t>(ops) * 8 / 7 + 1);
  int64_t now = 1'000'000;
  for (int64_t i = 0; i < ops; ++i) {
    if (i % 10 == 0) {  // the thread waits for input, the GPU idles
      t.ranges.push_back(Range{now, now + 30'000, 1, data, RangeKind::kData});
      now += 30'000;
    }
    HostCall c;
    c.start_ns = now;
    c.end_ns = now + 3'000;
    c.correlation_id = static_cast<uint64_t>(i + 1);
    c.thread = 1;
    c.name = launch;
    c.category = CallCategory::kLaunch;
    t.calls.push_back(c);
    DeviceOp op;
    op.start_ns = now + 5'000;
    op.end_ns = now + 5'000 + 8'000 + (i % 5) * 1'000;
    op.correlation_id = c.correlation_id;
    op.name = kernel;
    op.stream = 7;
    t.devices[0].ops.push_back(op);
    now = op.end_ns + 500 + (i % 13) * 200;
    if (i % 7 == 0) {
      HostCall s;
      s.start_ns = c.end_ns;
      s.end_ns = op.end_ns + 200;
      s.thread = 1;
      s.name = sync;
      s.stream = 7;
      s.category = CallCategory::kSync;
      t.calls.push_back(s);
      now = std::max(now, s.end_ns + 1'000);
    }
  }
  t.Finalize();
  return t;
}

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

int main(int argc, char** argv) {
  int64_t ops = 1'000'000;
  std::string out = "trace_writer_benchmark.json";
  gpuidle::internal::TraceOptions trace_options;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--ops") {
      ops = std::atoll(argv[i + 1]);
    } else if (flag == "--out") {
      out = argv[i + 1];
    } else if (flag == "--max-gaps") {
      trace_options.max_gaps = std::atoi(argv[i + 1]);
    } else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  const Timeline t = Synthetic(ops);
  auto began = std::chrono::steady_clock::now();
  absl::StatusOr<gpuidle::Report> report =
      gpuidle::internal::Analyze(t, gpuidle::AnalysisOptions());
  if (!report.ok()) {
    std::fprintf(stderr, "analysis failed: %s\n", std::string(report.status().message()).c_str());
    return 1;
  }
  std::printf("timeline: %lld ops, %zu calls, %zu ranges; analysed in %.2f s; RSS %lld MB\n",
              static_cast<long long>(ops), t.calls.size(), t.ranges.size(),
              Seconds(std::chrono::steady_clock::now() - began),
              static_cast<long long>(StatusKb("VmRSS:") / 1024));

  // What drawing every gap adds: the analysis again, keeping up to max_gaps records (the session
  // does this before it writes a trace; the writer only draws the list).
  absl::StatusOr<gpuidle::internal::GapList> gaps;
  {
    ResetPeak();
    const int64_t before_kb = StatusKb("VmRSS:");
    began = std::chrono::steady_clock::now();
    gaps = gpuidle::internal::ListGaps(t, report->options, trace_options.max_gaps);
    if (!gaps.ok()) return 1;
    std::printf("ListGaps: %zu of %lld gaps kept in %.2f s; peak RSS +%lld MB\n", gaps->gaps.size(),
                static_cast<long long>(gaps->devices[0].gaps),
                Seconds(std::chrono::steady_clock::now() - began),
                static_cast<long long>((StatusKb("VmHWM:") - before_kb) / 1024));
  }

  gpuidle::internal::OutputFileOptions replace;
  replace.if_exists = gpuidle::internal::IfExists::kReplace;
  for (int round = 0; round < 2; ++round) {
    const bool streamed = round == 0;
    ResetPeak();
    const int64_t before_kb = StatusKb("VmRSS:");
    began = std::chrono::steady_clock::now();
    size_t bytes = 0;
    if (streamed) {
      absl::StatusOr<std::string> written =
          gpuidle::internal::WriteGpuidleTrace(t, &*report, &*gaps, out, replace, trace_options);
      if (!written.ok()) {
        std::fprintf(stderr, "%s\n", std::string(written.status().message()).c_str());
        return 1;
      }
      std::ifstream f(out, std::ios::binary | std::ios::ate);
      bytes = static_cast<size_t>(f.tellg());
    } else {
      const std::string text =
          gpuidle::internal::FormatGpuidleTrace(t, &*report, &*gaps, trace_options);
      bytes = text.size();
      if (!gpuidle::internal::WriteOutputFile(out, text, replace).ok()) return 1;
    }
    const double seconds = Seconds(std::chrono::steady_clock::now() - began);
    const int64_t peak_kb = StatusKb("VmHWM:");
    std::printf("%s: %.1f MB written in %.2f s; peak RSS +%lld MB over the %lld MB before\n",
                streamed ? "streamed (WriteGpuidleTrace)" : "one string (FormatGpuidleTrace)",
                static_cast<double>(bytes) / 1e6, seconds,
                static_cast<long long>((peak_kb - before_kb) / 1024),
                static_cast<long long>(before_kb / 1024));
  }
  return 0;
}
