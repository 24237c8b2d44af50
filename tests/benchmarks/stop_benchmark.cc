// What the stop of a live collection costs on the CPU, part by part, for a capture of N events
// (issue 15: "report ready <= 100 ms after stop for 1 M recorded events"): building the Timeline
// from the decoded records (RecordTranslator::Finish, the host and call-site ranges moved in,
// Timeline::Finalize), Analyze(), and formatting the report as text and JSON.
//
//   build-speed/bin/stop_benchmark [--events N] [--rounds R] [--as-recorded]
//   STOP_BENCHMARK_DUMP=/tmp/after build-speed/bin/stop_benchmark   # also writes the reports
//
// The capture is synthetic but shaped like a launch-bound training loop (a tiny MLP): steps of
// ~250 kernels of a few microseconds on two streams, each kernel with its cudaLaunchKernel record
// (correlated), an input copy and a loss sync per step, an event record / stream wait between
// the streams, a gpuidle.step and gpuidle.data marker per step, NVTX-like user ranges and the
// Python call-site ranges of the sync and copy calls. The CUPTI records are real record structs
// (the fake CUPTI's builders), translated by the collector's RecordTranslator; translation runs
// during collection (the decode worker), so it is timed apart from the stop.
//
// Prints per part the median of R rounds in ms and in events per second.
#include <cupti.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "analysis/analyze.h"
#include "collect/call_timing.h"
#include "collect/fake_cupti.h"
#include "collect/record_translation.h"
#include "gpuidle/analyze.h"
#include "gpuidle/options.h"
#include "gpuidle/report.h"
#include "model/timeline.h"

namespace {

using gpuidle::internal::Range;
using gpuidle::internal::RangeKind;
using gpuidle::internal::RecordTranslator;
using gpuidle::internal::StringId;
using gpuidle::internal::Timeline;
namespace fake = gpuidle::internal::fake_cupti;

constexpr uint32_t kThread = 4242;
constexpr uint32_t kMainStream = 7;
constexpr uint32_t kSideStream = 13;
constexpr int kKernelsPerStep = 250;
constexpr int kKernelNames = 40;

// Records packed back to back (8-byte aligned), in the order the decode worker would see them:
// buffers of one kind of record each, taken in turn.
class RecordStore {
 public:
  template <typename T>
  void Add(std::vector<size_t>* order, const T& record) {
    order->push_back(words_.size());
    const size_t words = (sizeof(T) + 7) / 8;
    words_.resize(words_.size() + words);
    std::memcpy(&words_[words_.size() - words], &record, sizeof(T));
  }
  const CUpti_Activity& At(size_t offset) const {
    return *reinterpret_cast<const CUpti_Activity*>(&words_[offset]);
  }

 private:
  std::vector<uint64_t> words_;
};

// A host range as HostRangeRecorder keeps it (its name a std::string), and a call site as
// CallSiteLog keeps it (correlation id, interned pointer).
struct HostRangeRecord {
  int64_t start_ns;
  int64_t end_ns;
  RangeKind kind;
  std::string name;
};

struct Capture {
  RecordStore store;
  std::vector<size_t> order;  // offsets of the records, in delivery order
  std::vector<HostRangeRecord> ranges;
  std::vector<std::pair<uint64_t, const char*>> sites;
  size_t events = 0;  // device ops + host calls + host ranges of the final timeline
  int steps = 0;
};

const std::vector<std::string>& KernelNames() {
  static const auto* names = [] {
    auto* v = new std::vector<std::string>;
    for (int i = 0; i < kKernelNames; ++i) {
      const std::string base = absl::StrCat("mlp_kernel_", i);
      v->push_back(absl::StrCat("_Z", base.size(), base, "PfPKfi"));
    }
    return v;
  }();
  return *names;
}

Capture MakeCapture(size_t target_events) {
  Capture c;
  std::vector<size_t> api, kernels, copies, syncs, events;
  uint64_t now = 1'000'000'000'000;  // CLOCK_MONOTONIC-like
  uint32_t correlation = 1;
  uint64_t gpu_free = 0;
  uint64_t side_free = 0;
  uint32_t rng = 12345;
  auto next_random = [&]() {
    rng = rng * 1664525u + 1013904223u;
    return rng >> 8;
  };
  static const char* const kCopySite = "train.py:41 train_step";
  static const char* const kSyncSite = "train.py:57 train_step";
  c.store.Add(&events, fake::Device(0, "NVIDIA H200", true));
  while (c.events < target_events) {
    const int step = c.steps++;
    const uint64_t step_start = now;
    int side_waits = 0;
    // The input: a DataLoader wait, then the copy to the device.
    const uint64_t data_end = now + 40'000 + next_random() % 20'000;
    c.ranges.push_back({static_cast<int64_t>(now), static_cast<int64_t>(data_end), RangeKind::kData,
                        "gpuidle.data"});
    now = data_end + 500;
    {
      const uint32_t id = correlation++;
      const uint64_t call_end = now + 6'000;
      c.store.Add(&api, fake::Api(CUPTI_ACTIVITY_KIND_RUNTIME,
                                  CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, now, call_end,
                                  kThread, id));
      const uint64_t copy_start = std::max(gpu_free, now + 2'000);
      const uint64_t copy_end = copy_start + 8'000;
      c.store.Add(&copies,
                  fake::Memcpy(0, kMainStream, copy_start, copy_end,
                               CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
                               CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 1 << 20, id));
      c.sites.emplace_back(id, kCopySite);
      gpu_free = copy_end;
      now = call_end + 300;
    }
    const char* const phases[] = {"forward", "backward", "optimizer"};
    for (int phase = 0; phase < 3; ++phase) {
      const uint64_t phase_start = now;
      const int phase_kernels =
          phase == 2 ? kKernelsPerStep - 2 * (kKernelsPerStep / 3) : kKernelsPerStep / 3;
      for (int k = 0; k < phase_kernels; ++k) {
        // Every 50th kernel runs on the side stream, after an event record / stream wait.
        const bool side = k % 50 == 25;
        if (side) {
          ++side_waits;
          const uint32_t record_id = correlation++;
          c.store.Add(&api, fake::Api(CUPTI_ACTIVITY_KIND_RUNTIME,
                                      CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020, now,
                                      now + 1'500, kThread, record_id));
          c.store.Add(&events, fake::EventRecord(1, kMainStream, record_id));
          now += 1'800;
          const uint32_t wait_id = correlation++;
          c.store.Add(&api, fake::Api(CUPTI_ACTIVITY_KIND_RUNTIME,
                                      CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020, now,
                                      now + 1'200, kThread, wait_id));
          c.store.Add(&syncs, fake::Sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT,
                                         kSideStream, 1, now, now + 1'200, wait_id));
          now += 1'500;
        }
        const uint32_t id = correlation++;
        const uint64_t call_end = now + 2'500 + next_random() % 1'500;
        c.store.Add(&api, fake::Api(CUPTI_ACTIVITY_KIND_RUNTIME,
                                    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, now, call_end,
                                    kThread, id));
        uint64_t& free = side ? side_free : gpu_free;
        const uint64_t start = std::max(free, call_end + 1'000 + next_random() % 1'000);
        const uint64_t end = start + 1'500 + next_random() % 3'000;
        c.store.Add(&kernels,
                    fake::Kernel(0, side ? kSideStream : kMainStream, start, end,
                                 KernelNames()[(phase * 13 + k) % kKernelNames].c_str(), id));
        free = end;
        // Host work between launches (Python, the framework's dispatch).
        now = call_end + 1'000 + next_random() % 2'500;
      }
      c.ranges.push_back({static_cast<int64_t>(phase_start), static_cast<int64_t>(now),
                          RangeKind::kUser, phases[phase]});
    }
    // loss.item(): a sync until the GPU drains.
    {
      const uint32_t id = correlation++;
      const uint64_t call_end = std::max(now + 3'000, std::max(gpu_free, side_free) + 2'000);
      c.store.Add(&api, fake::Api(CUPTI_ACTIVITY_KIND_RUNTIME,
                                  CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, now,
                                  call_end, kThread, id));
      c.store.Add(&syncs, fake::Sync(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE,
                                     kMainStream, 0, now, call_end, id));
      c.sites.emplace_back(id, kSyncSite);
      now = call_end + 2'000;
    }
    c.ranges.push_back({static_cast<int64_t>(step_start), static_cast<int64_t>(now),
                        RangeKind::kStep, absl::StrCat("gpuidle.step#", step)});
    now += 1'000;
    // Calls and ops of the kernels, the copy and the sync; step, data, phase and site ranges.
    c.events += 2 * kKernelsPerStep + 2 * side_waits + 3 + 7;
  }
  // Delivery: buffers of 4096 records of one kind, in turn.
  std::vector<std::vector<size_t>*> kinds = {&api, &kernels, &copies, &syncs, &events};
  std::vector<size_t> next(kinds.size(), 0);
  bool left = true;
  while (left) {
    left = false;
    for (size_t k = 0; k < kinds.size(); ++k) {
      const size_t end = std::min(kinds[k]->size(), next[k] + 4096);
      for (; next[k] < end; ++next[k]) c.order.push_back((*kinds[k])[next[k]]);
      left |= next[k] < kinds[k]->size();
    }
  }
  return c;
}

void Translate(const Capture& c, RecordTranslator* translator) {
  for (size_t offset : c.order) translator->Translate(c.store.At(offset));
}

// The collector's stop after the last buffer: Finish, the host ranges and call sites moved in
// (as HostRangeRecorder::MoveInto and CallSiteLog::MoveInto do), Finalize.
Timeline Build(const Capture& c, RecordTranslator* translator) {
  Timeline t = translator->Finish();
  t.ranges.reserve(t.ranges.size() + c.ranges.size());
  for (const HostRangeRecord& r : c.ranges) {
    t.ranges.push_back(Range{r.start_ns, r.end_ns, kThread, t.strings.Intern(r.name), r.kind});
  }
  absl::flat_hash_map<const char*, StringId> names;
  absl::flat_hash_map<uint64_t, size_t> call_by_correlation;
  call_by_correlation.reserve(t.calls.size());
  for (size_t i = 0; i < t.calls.size(); ++i) {
    call_by_correlation.emplace(t.calls[i].correlation_id, i);
  }
  for (const auto& [correlation, site] : c.sites) {
    auto call = call_by_correlation.find(correlation);
    if (call == call_by_correlation.end()) continue;
    auto [name, inserted] = names.try_emplace(site, 0);
    if (inserted) name->second = t.strings.Intern(site);
    const auto& hc = t.calls[call->second];
    t.ranges.push_back(Range{hc.start_ns, hc.end_ns, hc.thread, name->second, RangeKind::kPython});
  }
  t.Finalize();
  t.info.tracer_cost =
      gpuidle::internal::kTracerCostOfTimedCalls;  // as the collector's Stop sets it
  t.info.source = "gpuidle";
  return t;
}

size_t EventsOf(const Timeline& t) {
  size_t n = t.calls.size() + t.ranges.size();
  for (const auto& d : t.devices) n += d.ops.size();
  return n;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 == 1 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

int main(int argc, char** argv) {
  size_t target = 1'000'000;
  int rounds = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--events") == 0) target = std::strtoull(argv[i + 1], nullptr, 10);
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::atoi(argv[i + 1]);
  }
  gpuidle::AnalysisOptions options;
  // --as-recorded: the analysis without taking the tracer's time out (no copy of the timeline).
  for (int i = 1; i < argc; ++i) options.as_recorded |= std::strcmp(argv[i], "--as-recorded") == 0;
  const Capture capture = MakeCapture(target);
  std::vector<double> translate_ms, build_ms, analyze_ms, text_ms, json_ms;
  size_t events = 0, text_bytes = 0, json_bytes = 0;
  for (int round = 0; round < rounds; ++round) {
    RecordTranslator translator(fake::FakeApi());
    auto start = std::chrono::steady_clock::now();
    Translate(capture, &translator);
    translate_ms.push_back(MsSince(start));

    start = std::chrono::steady_clock::now();
    const Timeline timeline = Build(capture, &translator);
    build_ms.push_back(MsSince(start));
    events = EventsOf(timeline);

    start = std::chrono::steady_clock::now();
    absl::StatusOr<gpuidle::Report> report = gpuidle::internal::Analyze(timeline, options);
    analyze_ms.push_back(MsSince(start));
    if (!report.ok()) {
      std::fprintf(stderr, "analysis failed: %s\n", report.status().ToString().c_str());
      return 1;
    }

    start = std::chrono::steady_clock::now();
    absl::StatusOr<std::string> text = gpuidle::FormatReport(*report, "text");
    text_ms.push_back(MsSince(start));
    start = std::chrono::steady_clock::now();
    absl::StatusOr<std::string> json = gpuidle::FormatReport(*report, "json");
    json_ms.push_back(MsSince(start));
    if (!text.ok() || !json.ok()) return 1;
    text_bytes = text->size();
    json_bytes = json->size();
    // STOP_BENCHMARK_DUMP=prefix: writes prefix.txt and prefix.json, to compare the reports of
    // two builds byte for byte.
    if (const char* dump = std::getenv("STOP_BENCHMARK_DUMP"); round == 0 && dump != nullptr) {
      for (const auto& [suffix, content] :
           {std::pair{".txt", &*text}, std::pair{".json", &*json}}) {
        FILE* f = std::fopen(absl::StrCat(dump, suffix).c_str(), "wb");
        if (f == nullptr) return 1;
        std::fwrite(content->data(), 1, content->size(), f);
        std::fclose(f);
      }
    }
  }
  std::printf("events %zu (%d steps, %zu records); text %zu bytes, json %zu bytes; median of %d\n",
              events, capture.steps, capture.order.size(), text_bytes, json_bytes, rounds);
  const auto row = [&](const char* part, const std::vector<double>& ms) {
    const double m = Median(ms);
    std::printf("  %-28s %9.2f ms  %8.1f M events/s\n", part, m,
                static_cast<double>(events) / m / 1e3);
  };
  row("translate (during collection)", translate_ms);
  row("build (Finish..Finalize)", build_ms);
  row("analyze", analyze_ms);
  row("format text", text_ms);
  row("format json", json_ms);
  std::vector<double> total;
  for (int r = 0; r < rounds; ++r) total.push_back(build_ms[r] + analyze_ms[r] + text_ms[r]);
  row("stop total (build+analyze+text)", total);
  return 0;
}
