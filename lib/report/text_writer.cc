// The terminal summary: a table a person reads in ten seconds.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "gpuidle/report.h"
#include "report/writer.h"

namespace gpuidle::internal {
namespace {

constexpr size_t kMaxStepsShown = 20;
constexpr size_t kMaxOffendersShown = 8;
constexpr size_t kSiteWidth = 78;

std::string Ms(int64_t ns) { return absl::StrFormat("%.1f", static_cast<double>(ns) / 1e6); }

std::string Pct(int64_t part, int64_t whole) {
  if (whole <= 0) return "-";
  return absl::StrFormat("%.1f%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

std::string Shorten(absl::string_view s, size_t width) {
  if (s.size() <= width) return std::string(s);
  return absl::StrCat(s.substr(0, width - 3), "...");
}

// Kernel "void ns::kernel<T>(int, float*)" -> "ns::kernel<T>": the signature says little here.
std::string DisplayName(absl::string_view name) {
  if (absl::StartsWith(name, "void ")) name.remove_prefix(5);
  int depth = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '<') ++depth;
    if (name[i] == '>') --depth;
    if (name[i] != '(' || depth != 0 || i == 0) continue;
    if (absl::StartsWith(name.substr(i), "(anonymous namespace)")) continue;
    return std::string(name.substr(0, i));
  }
  return std::string(name);
}

std::string OffenderLine(const Offender& o) {
  const bool kernel = o.subcause == Subcause::kLaunchOverhead ||
                      o.subcause == Subcause::kKernelGap || o.subcause == Subcause::kUnattributed;
  const std::string what = kernel ? DisplayName(o.what) : o.what;
  if (o.site.empty()) return what;
  if (o.subcause == Subcause::kHost) return absl::StrCat(what, " before ", o.site);
  return absl::StrCat(o.site, " -> ", what);
}

std::string DeviceLabel(const std::optional<int>& rank, int device) {
  return rank ? absl::StrCat("rank ", *rank, " GPU ", device) : absl::StrCat("GPU ", device);
}

// Shown for every device with collectives, idle or not: a fully busy GPU may still spend its
// time in exposed communication or waiting for peers.
void Communication(const DeviceReport& d, std::string* out) {
  if (d.comm_ns > 0 || d.comm_wait_ns) {
    absl::StrAppendFormat(out, "  communication %s ms, exposed %s ms%s\n", Ms(d.comm_ns),
                          Ms(d.exposed_comm_ns),
                          d.comm_wait_ns ? absl::StrCat(", waiting for peers ", Ms(*d.comm_wait_ns),
                                                        " ms")
                                         : "");
  }
}

void Device(const DeviceReport& d, std::string* out) {
  absl::StrAppendFormat(out, "%s%s  busy %s  idle %s (%s ms of %s ms)\n",
                        DeviceLabel(d.rank, d.device), d.name.empty() ? "" : "  " + d.name,
                        Pct(d.busy_ns, d.window_ns), Pct(d.idle_ns, d.window_ns), Ms(d.idle_ns),
                        Ms(d.window_ns));
  if (d.idle_ns <= 0) return Communication(d, out);
  absl::StrAppendFormat(out, "  %-14s %10s %8s   %s\n", "idle cause", "ms", "of idle",
                        "subcauses (ms)");
  std::vector<Cause> causes;
  for (int c = 0; c < kNumCauses; ++c) causes.push_back(static_cast<Cause>(c));
  std::stable_sort(causes.begin(), causes.end(), [&](Cause a, Cause b) {
    return d.idle.CauseNs(a) > d.idle.CauseNs(b);
  });
  for (Cause c : causes) {
    const int64_t ns = d.idle.CauseNs(c);
    if (ns == 0) continue;
    std::vector<std::string> parts;
    for (int s = 0; s < kNumSubcauses; ++s) {
      const auto sub = static_cast<Subcause>(s);
      if (CauseOf(sub) == c && d.idle[sub] > 0 && sub != Subcause::kUnattributed) {
        parts.push_back(absl::StrCat(SubcauseName(sub), " ", Ms(d.idle[sub])));
      }
    }
    absl::StrAppendFormat(out, "  %-14s %10s %8s   %s\n", CauseName(c), Ms(ns), Pct(ns, d.idle_ns),
                          absl::StrJoin(parts, ", "));
  }
  Communication(d, out);
}

void Steps(const Report& r, std::string* out) {
  for (const DeviceReport& d : r.devices) {
    std::vector<const StepReport*> steps;
    for (const StepReport& s : r.steps) {
      if (s.device == d.device && s.rank == d.rank) steps.push_back(&s);
    }
    if (steps.empty()) continue;
    const size_t total = steps.size();
    if (steps.size() > kMaxStepsShown) {  // the steps that lost the most, in time order
      std::stable_sort(steps.begin(), steps.end(), [](const StepReport* a, const StepReport* b) {
        return a->idle.TotalNs() > b->idle.TotalNs();
      });
      steps.resize(kMaxStepsShown);
      std::sort(steps.begin(), steps.end(), [](const StepReport* a, const StepReport* b) {
        return a->start_ns < b->start_ns;
      });
    }
    absl::StrAppendFormat(out, "\nsteps on %s%s\n", DeviceLabel(d.rank, d.device),
                          total > steps.size()
                              ? absl::StrCat(" (", steps.size(), " of ", total,
                                             " with the most idle time; all in --format json)")
                              : "");
    absl::StrAppendFormat(out, "  %-22s %9s %7s %9s %9s %9s %9s  %s\n", "step", "ms", "busy",
                          "data ms", "launch ms", "sync ms", "other ms", "dominant");
    for (const StepReport* s : steps) {
      const int64_t span = s->end_ns - s->start_ns;
      const int64_t idle = s->idle.TotalNs();
      absl::StrAppendFormat(
          out, "  %-22s %9s %7s %9s %9s %9s %9s  %s\n", Shorten(s->name, 22), Ms(span),
          Pct(s->busy_ns, span), Ms(s->idle.CauseNs(Cause::kDataStarved)),
          Ms(s->idle.CauseNs(Cause::kLaunchBound)), Ms(s->idle.CauseNs(Cause::kSyncBound)),
          Ms(s->idle.CauseNs(Cause::kUnattributed)),
          idle > 0 ? QualifiedSubcauseName(s->idle.Dominant()) : "-");
    }
  }
}

class TextWriter : public ReportWriter {
 public:
  std::string Write(const Report& r, const AnalysisOptions&) const override {
    std::string out = "gpuidle: why the GPU was idle\n";
    absl::StrAppendFormat(&out, "source: %s%s\n", r.source,
                          r.inputs.empty() ? "" : absl::StrCat(" (", absl::StrJoin(r.inputs, ", "), ")"));
    std::string records =
        !r.dropped_records ? "the source does not report lost records"
        : *r.dropped_records == 0 ? "complete"
                                  : absl::StrCat(*r.dropped_records, " records lost (not counted as idle)");
    if (r.zero_timestamp_records > 0) {
      absl::StrAppend(&records, "; ", r.zero_timestamp_records,
                      " records without time stamps skipped");
    }
    if (r.record_limit_reached) {
      absl::StrAppend(&records, "; collection stopped at the record limit (GPUIDLE_MAX_RECORDS): "
                                "the report covers the time until then");
    }
    absl::StrAppendFormat(&out, "window: %s ms   records: %s\n",
                          Ms(r.window_end_ns - r.window_start_ns), records);
    if (r.visible_device_count > 0) {
      absl::StrAppendFormat(&out, "GPUs: %d of %d visible used%s\n",
                            r.visible_device_count - static_cast<int>(r.unused_devices.size()),
                            r.visible_device_count,
                            r.unused_devices.empty()
                                ? ""
                                : absl::StrCat(" (never used: ", absl::StrJoin(r.unused_devices, ", "),
                                               ")"));
    }
    out += "\n";
    if (r.devices.empty()) out += "no GPU work in this trace\n";
    for (const DeviceReport& d : r.devices) Device(d, &out);
    Steps(r, &out);
    if (!r.offenders.empty()) {
      absl::StrAppendFormat(&out, "\n%-30s %10s %7s\n", "top offenders", "idle ms", "gaps");
      for (size_t i = 0; i < r.offenders.size() && i < kMaxOffendersShown; ++i) {
        const Offender& o = r.offenders[i];
        absl::StrAppendFormat(&out, "  %-28s %10s %7d\n    %s\n", QualifiedSubcauseName(o.subcause),
                              Ms(o.idle_ns), o.count, Shorten(OffenderLine(o), kSiteWidth));
      }
    }
    if (!r.advice.empty()) {
      out += "\nwhat to do\n";
      for (const Advice& a : r.advice) {
        absl::StrAppendFormat(&out, "  %s (%.0f%% of lost time): %s\n",
                              QualifiedSubcauseName(a.subcause), 100 * a.share_of_lost_time, a.fix);
      }
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<ReportWriter> MakeTextWriter() { return std::make_unique<TextWriter>(); }

}  // namespace gpuidle::internal
