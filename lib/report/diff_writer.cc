#include "report/diff_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/terminal.h"
#include "core/text_safety.h"
#include "core/time_units.h"
#include "model/report_names.h"
#include "report/json_fields.h"
#include "report/json_output.h"
#include "report/phases.h"

namespace gpuidle::internal {
namespace {

constexpr size_t kMaxWidth = 100;
constexpr size_t kMaxDevicesShown = 16;
constexpr size_t kMaxInputsWidth = 60;
// Each input named in a run's line gets at least this many columns; at most this many inputs
// are named (the ranks of a job), the others counted.
constexpr size_t kMinInputWidth = 40;
constexpr size_t kMaxInputsNamed = 3;
// Below this lost share of the run after, its advice is listed without the fixes.
constexpr double kMinLostShareForFixes = 0.05;

// ---------------------------------------------------------------------------------------------
// Text

std::string Duration(int64_t ns, bool sign = false) { return FormatDuration(ns, sign); }

std::string Pct(double share) { return absl::StrFormat("%.1f%%", 100 * share); }

// "-41.6%", or "-" where there is nothing to be relative to.
std::string Relative(const Change& c) {
  const std::optional<double> r = c.Relative();
  if (!r) return c.after == 0 ? "" : "new";
  return absl::StrFormat("%+.1f%%", 100 * *r);
}

std::string Label(const DiffDevice& d) {
  return d.rank ? absl::StrCat("rank ", *d.rank, " GPU ", d.device)
                : absl::StrCat("GPU ", d.device);
}

// text on lines of at most kMaxWidth columns where it has spaces to break at, the first line
// beginning with first_indent, the others with indent; runs of spaces inside a line are kept
// (the columns of a row).
std::string Wrap(absl::string_view text, absl::string_view first_indent, absl::string_view indent) {
  std::string out;
  absl::string_view lead = first_indent;
  while (true) {
    const size_t room = kMaxWidth > lead.size() ? kMaxWidth - lead.size() : 1;
    if (text.size() <= room) break;
    // The last space that leaves the line within the width; a word longer than the line is
    // cut (between UTF-8 sequences), so that nothing is lost and no line is longer.
    size_t cut = text.rfind(' ', room);
    size_t skip = 1;
    if (cut == absl::string_view::npos || cut == 0) {
      cut = room;
      while (cut > 1 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
      skip = 0;
    }
    absl::StrAppend(&out, lead, text.substr(0, cut), "\n");
    text.remove_prefix(cut + skip);
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    lead = indent;
  }
  absl::StrAppend(&out, lead, text, "\n");
  return out;
}

// The columns of the tables: a label, before, after, change, relative change.
void Row(std::string* out, absl::string_view label, absl::string_view before,
         absl::string_view after, absl::string_view change, absl::string_view relative = "") {
  std::string line = absl::StrFormat("  %-30s %11s %11s %11s %9s", Shorten(label, 30), before,
                                     after, change, relative);
  while (!line.empty() && line.back() == ' ') line.pop_back();
  absl::StrAppend(out, line, "\n");
}

void TimeRow(std::string* out, absl::string_view label, const Change& c) {
  Row(out, label, Duration(c.before), Duration(c.after), Duration(c.Delta(), true), Relative(c));
}

void ShareRow(std::string* out, absl::string_view label, const ShareChange& s) {
  Row(out, label, Pct(s.before), Pct(s.after), absl::StrFormat("%+.1f pts", 100 * s.Delta()));
}

// The inputs of a run for its line: as they are where they fit, else each elided, file names
// kept (ElideKeepingFileNames),
// the first kMaxInputsNamed of them and how many more.
std::string InputsText(const std::vector<std::string>& raw) {
  std::vector<std::string> inputs;
  for (const std::string& in : raw) inputs.push_back(Printable(in));
  const std::string all = absl::StrJoin(inputs, ", ");
  if (all.size() <= kMaxInputsWidth) return all;
  const size_t named = std::min(inputs.size(), kMaxInputsNamed);
  const size_t width = std::max(kMinInputWidth, (kMaxInputsWidth - 2 * (named - 1)) / named);
  std::vector<std::string> parts;
  for (size_t i = 0; i < named; ++i) parts.push_back(ElideKeepingFileNames(inputs[i], width));
  if (inputs.size() > named) parts.push_back(absl::StrCat("and ", inputs.size() - named, " more"));
  return absl::StrJoin(parts, ", ");
}

std::string RunLine(const DiffRun& r, const Change& steps, bool is_after) {
  const int64_t n = is_after ? steps.after : steps.before;
  std::string step_text =
      n == 0 ? "no steps"
             : absl::StrCat(
                   n, n == 1 ? " step" : " steps",
                   r.step_source.empty() ? "" : absl::StrCat(" (", Printable(r.step_source), ")"));
  std::string line =
      absl::StrCat(is_after ? "after:  " : "before: ", Printable(r.source),
                   r.inputs.empty() ? "" : absl::StrCat(" (", InputsText(r.inputs), ")"));
  absl::StrAppend(
      &line, "; ", step_text, "; ", r.devices, r.devices == 1 ? " GPU" : " GPUs",
      "; records: ", r.completeness == report_values::kRecordsLost ? "lost" : r.completeness,
      r.sampled ? "; sampled" : "");
  return Wrap(line, "", "        ");
}

// Runs that look like different programs are said to be so before the verdict, with the reasons.
void Comparability(const ReportDiff& d, std::string* out) {
  if (d.comparability.comparable) return;
  absl::StrAppend(out, "\n",
                  Wrap("NOT COMPARABLE: the runs look like different programs (or set-ups), so "
                       "the figures below say nothing about a fix:",
                       "", "  "));
  for (const DiffCaveat& r : d.comparability.reasons) {
    absl::StrAppend(out, Wrap(Printable(r.message), "  - ", "    "));
  }
}

void Steady(const ReportDiff& d, std::string* out) {
  absl::StrAppend(out, "\n");
  Row(out, "steady state", "before", "after", "change");
  TimeRow(out, "time", d.steady_ns);
  Row(out, "steps", absl::StrCat(d.steps.before), absl::StrCat(d.steps.after),
      absl::StrFormat("%+d", d.steps.Delta()));
  if (d.mean_step_ns) TimeRow(out, "mean step", *d.mean_step_ns);
  if (d.median_step_ns) TimeRow(out, "median step (steps listed)", *d.median_step_ns);
  ShareRow(out, "busy", d.busy_share);
  ShareRow(out, "idle", d.idle_share);
  ShareRow(out, "lost (idle + peer waits)", d.lost_share);
  TimeRow(out, d.unit == DiffUnit::kPerStep ? "GPU busy per step" : "GPU busy per second",
          d.busy_per_unit);
}

void Causes(const ReportDiff& d, std::string* out) {
  absl::StrAppend(out, "\n");
  Row(out,
      d.unit == DiffUnit::kPerStep ? "lost time per step" : "lost time per second of steady state",
      "before", "after", "change");
  TimeRow(out, "all causes", d.lost_per_unit);
  std::vector<Cause> causes;
  for (int c = 0; c < kNumCauses; ++c) causes.push_back(static_cast<Cause>(c));
  // Largest first, before or after, so that what disappeared stays on top.
  const auto size = [&](Cause c) {
    const Change& x = d.lost_by_cause[static_cast<int>(c)];
    return std::max(x.before, x.after);
  };
  std::stable_sort(causes.begin(), causes.end(),
                   [&](Cause a, Cause b) { return size(a) > size(b); });
  for (Cause c : causes) {
    const Change& x = d.lost_by_cause[static_cast<int>(c)];
    if (x.before == 0 && x.after == 0) continue;
    TimeRow(out, CauseName(c), x);
    if (c == Cause::kUnattributed) continue;
    for (int s = 0; s < kNumSubcauses; ++s) {
      const auto sub = static_cast<Subcause>(s);
      const Change& y = d.lost_by_subcause[s];
      if (CauseOf(sub) != c || (y.before == 0 && y.after == 0)) continue;
      TimeRow(out, absl::StrCat("  ", SubcauseName(sub)), y);
    }
  }
}

void Communication(const ReportDiff& d, std::string* out) {
  if (d.comm_per_unit.before == 0 && d.comm_per_unit.after == 0 && !d.comm_wait_per_unit) return;
  absl::StrAppend(out, "\n");
  Row(out, d.unit == DiffUnit::kPerStep ? "communication per step" : "communication per second",
      "before", "after", "change");
  TimeRow(out, "collectives", d.comm_per_unit);
  TimeRow(out, "exposed (no compute)", d.exposed_comm_per_unit);
  if (d.comm_wait_per_unit) TimeRow(out, "waiting for peers", *d.comm_wait_per_unit);
}

void StartUp(const ReportDiff& d, std::string* out) {
  if (d.start_up_ns.before == 0 && d.start_up_ns.after == 0) return;
  absl::StrAppend(out, "\n");
  Row(out, "start-up (apart, longest GPU)", "before", "after", "change");
  TimeRow(out, "start-up", d.start_up_ns);
  for (const OneOffChange& p : d.start_up_parts) {
    TimeRow(out, absl::StrCat("  ", OneOffLabel(p.kind, Phase::kStartUp)), p.ns);
  }
}

void Devices(const ReportDiff& d, std::string* out) {
  if (d.devices.size() <= 1 && d.only_before.empty() && d.only_after.empty()) return;
  absl::StrAppend(out, "\ndevices\n");
  for (size_t i = 0; i < d.devices.size() && i < kMaxDevicesShown; ++i) {
    const DeviceDiff& x = d.devices[i];
    std::string label = Label(x.after);
    if (Label(x.before) != label) label = absl::StrCat(Label(x.before), " -> ", label);
    // Parts on one line while they fit, the rest on lines of their own: a part is never split.
    std::vector<std::string> parts;
    if (x.mean_step_ns) {
      parts.push_back(absl::StrCat("step ", Duration(x.mean_step_ns->before), " -> ",
                                   Duration(x.mean_step_ns->after), " (", Relative(*x.mean_step_ns),
                                   ")"));
    }
    parts.push_back(
        absl::StrCat("lost ", Pct(x.lost_share.before), " -> ", Pct(x.lost_share.after)));
    if (x.comm_wait_ns) {
      parts.push_back(absl::StrCat("waiting for peers ", Duration(x.comm_wait_ns->before), " -> ",
                                   Duration(x.comm_wait_ns->after),
                                   x.unit == DiffUnit::kPerStep ? "/step" : "/s"));
    }
    const auto dominant = [](const std::optional<Subcause>& s) {
      return s ? QualifiedSubcauseName(*s) : std::string("-");
    };
    parts.push_back(
        absl::StrCat("dominant ", dominant(x.dominant_before), " -> ", dominant(x.dominant_after)));
    std::string line = absl::StrCat("  ", label, ":");
    for (size_t k = 0; k < parts.size(); ++k) {
      const std::string sep = k == 0 ? " " : ", ";
      if (line.size() + sep.size() + parts[k].size() > kMaxWidth) {
        absl::StrAppend(out, line, k == 0 ? "" : ",", "\n");
        line = absl::StrCat("    ", parts[k]);
      } else {
        absl::StrAppend(&line, sep, parts[k]);
      }
    }
    absl::StrAppend(out, line, "\n");
  }
  if (d.devices.size() > kMaxDevicesShown) {
    absl::StrAppend(out, "  and ", d.devices.size() - kMaxDevicesShown,
                    " more devices (all in --format json)\n");
  }
  const auto names = [](const std::vector<DiffDevice>& v) {
    std::vector<std::string> labels;
    for (const DiffDevice& x : v) labels.push_back(Label(x));
    return absl::StrJoin(labels, ", ");
  };
  if (!d.only_before.empty())
    absl::StrAppend(out, Wrap(absl::StrCat("before only: ", names(d.only_before)), "  ", "    "));
  if (!d.only_after.empty())
    absl::StrAppend(out, Wrap(absl::StrCat("after only: ", names(d.only_after)), "  ", "    "));
}

void AdviceSection(const ReportDiff& d, std::string* out) {
  if (d.advice.empty()) return;
  absl::StrAppend(out, "\nadvice: share of lost time before -> after, change of its lost time\n");
  if (!d.comparability.comparable) {
    absl::StrAppend(out, "  (of runs that are not comparable: resolved or new is no fix)\n");
  }
  const char* per = d.unit == DiffUnit::kPerStep ? "/step" : "/s";
  // The fixes of what is left, unless so little is left that they would be noise.
  const bool show_fixes = d.lost_share.after >= kMinLostShareForFixes;
  for (const AdviceChange& a : d.advice) {
    const auto share = [](const std::optional<double>& s) {
      return s ? absl::StrFormat("%.0f%%", 100 * *s) : std::string("-");
    };
    std::string line = absl::StrFormat("  %-9s %-30s %4s -> %-4s", AdviceStatusName(a.status),
                                       QualifiedSubcauseName(a.subcause), share(a.share_before),
                                       share(a.share_after));
    const Change& lost = d.lost_by_subcause[static_cast<int>(a.subcause)];
    absl::StrAppend(&line, "  ", Duration(lost.Delta(), true), per);
    if (a.predicted_gain_per_step_ns) {
      absl::StrAppend(&line, " (predicted ", Duration(-*a.predicted_gain_per_step_ns, true),
                      "/step)");
    }
    absl::StrAppend(out, Wrap(line, "", "    "));
    if (show_fixes && a.status != AdviceStatus::kResolved && !a.fix.empty()) {
      absl::StrAppend(out, Wrap(Printable(a.fix), "    ", "    "));
    }
  }
  if (!show_fixes && d.after.devices > 0) {
    absl::StrAppendFormat(out, "  (the run after loses %s of its steady state: no fix shown)\n",
                          Pct(d.lost_share.after));
  }
}

void Caveats(const ReportDiff& d, std::string* out) {
  if (d.caveats.empty()) return;
  absl::StrAppend(out, "\nthe comparison is weak:\n");
  for (const DiffCaveat& c : d.caveats)
    absl::StrAppend(out, Wrap(Printable(c.message), "  - ", "    "));
}

// ---------------------------------------------------------------------------------------------
// JSON: the diff's own keys are model/report_names.h's diff_keys; where it writes what the report
// writes, it does so with the report's keys and code (report/json_fields.h).

using json_fields::BoolField;
using json_fields::CauseFields;
using json_fields::DeviceFields;
using json_fields::Int64Field;
using json_fields::NumberField;
using json_fields::OptionalInt64Field;
using json_fields::OptionalNumberField;
using json_fields::OptionalSubcauseField;
using json_fields::StringField;
using json_fields::StringsField;
using json_output::Json;
using json_output::Str;

void JsonChange(Json& w, absl::string_view key, const Change& c) {
  Str(w, key);
  w.StartObject();
  Int64Field(w, diff_keys::kBefore, c.before);
  Int64Field(w, diff_keys::kAfter, c.after);
  Int64Field(w, diff_keys::kChange, c.Delta());
  OptionalNumberField(w, diff_keys::kRelative, c.Relative());
  w.EndObject();
}

void JsonChange(Json& w, absl::string_view key, const std::optional<Change>& c) {
  if (c) {
    JsonChange(w, key, *c);
  } else {
    Str(w, key);
    w.Null();
  }
}

void JsonShare(Json& w, absl::string_view key, const ShareChange& s) {
  Str(w, key);
  w.StartObject();
  NumberField(w, diff_keys::kBefore, s.before);
  NumberField(w, diff_keys::kAfter, s.after);
  NumberField(w, diff_keys::kChange, s.Delta());
  w.EndObject();
}

void JsonRun(Json& w, absl::string_view key, const DiffRun& r) {
  Str(w, key);
  w.StartObject();
  StringField(w, report_keys::kSource, r.source);
  StringsField(w, report_keys::kInputs, r.inputs);
  StringField(w, report_keys::kStepSource, r.step_source);
  Int64Field(w, report_keys::kDevices, r.devices);
  StringField(w, report_keys::kCompleteness, r.completeness);
  BoolField(w, diff_keys::kSampled, r.sampled);
  Int64Field(w, report_keys::kWarnings, r.warnings);
  w.EndObject();
}

void JsonDevice(Json& w, const DiffDevice& d) {
  w.StartObject();
  DeviceFields(w, d.rank, d.device);
  StringField(w, report_keys::kName, d.name);
  w.EndObject();
}

void JsonCauses(Json& w, absl::string_view key, const std::array<Change, kNumCauses>& causes) {
  Str(w, key);
  w.StartObject();
  for (int c = 0; c < kNumCauses; ++c) JsonChange(w, CauseName(static_cast<Cause>(c)), causes[c]);
  w.EndObject();
}

void JsonVerdict(Json& w, const DiffVerdict& v) {
  Str(w, report_keys::kVerdict);
  w.StartObject();
  StringField(w, diff_keys::kOutcome, DiffOutcomeName(v.outcome));
  StringField(w, diff_keys::kMetric, v.metric);
  OptionalSubcauseField(w, diff_keys::kMainChange, v.main_change);
  BoolField(w, diff_keys::kWeak, v.weak);
  StringField(w, diff_keys::kText, v.text);
  w.EndObject();
}

void JsonReasons(Json& w, absl::string_view key, const std::vector<DiffCaveat>& list) {
  Str(w, key);
  w.StartArray();
  for (const DiffCaveat& c : list) {
    w.StartObject();
    StringField(w, diff_keys::kCode, c.code);
    StringField(w, diff_keys::kMessage, c.message);
    w.EndObject();
  }
  w.EndArray();
}

void JsonComparability(Json& w, const DiffComparability& c) {
  Str(w, diff_keys::kComparability);
  w.StartObject();
  BoolField(w, diff_keys::kComparable, c.comparable);
  JsonReasons(w, diff_keys::kReasons, c.reasons);
  Str(w, diff_keys::kKernelsPerStep);
  if (c.kernels_per_step_before && c.kernels_per_step_after) {
    w.StartObject();
    NumberField(w, diff_keys::kBefore, *c.kernels_per_step_before);
    NumberField(w, diff_keys::kAfter, *c.kernels_per_step_after);
    w.EndObject();
  } else {
    w.Null();
  }
  Str(w, diff_keys::kKernelNames);
  w.StartObject();
  Int64Field(w, diff_keys::kBefore, c.kernel_names_before);
  Int64Field(w, diff_keys::kAfter, c.kernel_names_after);
  Int64Field(w, diff_keys::kShared, c.kernel_names_shared);
  w.EndObject();
  w.EndObject();
}

void JsonSteady(Json& w, const ReportDiff& d) {
  Str(w, diff_keys::kSteady);
  w.StartObject();
  JsonChange(w, report_keys::kNs, d.steady_ns);
  JsonChange(w, report_keys::kSteps, d.steps);
  JsonChange(w, diff_keys::kMeanStepNs, d.mean_step_ns);
  JsonChange(w, diff_keys::kMedianStepNs, d.median_step_ns);
  JsonShare(w, diff_keys::kBusyShare, d.busy_share);
  JsonShare(w, diff_keys::kIdleShare, d.idle_share);
  JsonShare(w, report_keys::kLostShare, d.lost_share);
  JsonChange(w, diff_keys::kBusyPerUnitNs, d.busy_per_unit);
  JsonChange(w, diff_keys::kLostPerUnitNs, d.lost_per_unit);
  w.EndObject();
}

void JsonStartUp(Json& w, const ReportDiff& d) {
  Str(w, diff_keys::kStartUp);
  w.StartObject();
  JsonChange(w, report_keys::kNs, d.start_up_ns);
  Str(w, report_keys::kParts);
  w.StartArray();
  for (const OneOffChange& p : d.start_up_parts) {
    w.StartObject();
    StringField(w, report_keys::kKind, OneOffKindName(p.kind));
    JsonChange(w, report_keys::kNs, p.ns);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
}

void JsonDeviceDiff(Json& w, const DeviceDiff& x) {
  w.StartObject();
  Str(w, diff_keys::kBefore);
  JsonDevice(w, x.before);
  Str(w, diff_keys::kAfter);
  JsonDevice(w, x.after);
  StringField(w, diff_keys::kUnit, DiffUnitName(x.unit));
  JsonChange(w, report_keys::kSteadyNs, x.steady_ns);
  JsonChange(w, report_keys::kStepCount, x.step_count);
  JsonChange(w, diff_keys::kMeanStepNs, x.mean_step_ns);
  JsonShare(w, diff_keys::kBusyShare, x.busy_share);
  JsonShare(w, report_keys::kLostShare, x.lost_share);
  JsonCauses(w, diff_keys::kLostByCause, x.lost_by_cause);
  JsonChange(w, diff_keys::kCommWaitPerUnitNs, x.comm_wait_ns);
  OptionalSubcauseField(w, diff_keys::kDominantBefore, x.dominant_before);
  OptionalSubcauseField(w, diff_keys::kDominantAfter, x.dominant_after);
  w.EndObject();
}

void JsonAdvice(Json& w, const AdviceChange& a) {
  w.StartObject();
  CauseFields(w, a.subcause);
  StringField(w, report_keys::kStatus, AdviceStatusName(a.status));
  OptionalNumberField(w, diff_keys::kShareBefore, a.share_before);
  OptionalNumberField(w, diff_keys::kShareAfter, a.share_after);
  OptionalInt64Field(w, diff_keys::kPredictedGainPerStepNs, a.predicted_gain_per_step_ns);
  StringField(w, report_keys::kFix, a.fix);
  w.EndObject();
}

void JsonMembers(Json& w, const ReportDiff& d) {
  JsonRun(w, diff_keys::kBefore, d.before);
  JsonRun(w, diff_keys::kAfter, d.after);
  StringField(w, diff_keys::kUnit, DiffUnitName(d.unit));
  JsonComparability(w, d.comparability);
  JsonVerdict(w, d.verdict);
  JsonReasons(w, diff_keys::kCaveats, d.caveats);

  JsonSteady(w, d);
  JsonCauses(w, diff_keys::kLostByCause, d.lost_by_cause);
  Str(w, diff_keys::kLostBySubcause);
  w.StartObject();
  for (int s = 0; s < kNumSubcauses; ++s) {
    JsonChange(w, QualifiedSubcauseName(static_cast<Subcause>(s)), d.lost_by_subcause[s]);
  }
  w.EndObject();

  Str(w, diff_keys::kCommunication);
  w.StartObject();
  JsonChange(w, diff_keys::kCommPerUnitNs, d.comm_per_unit);
  JsonChange(w, diff_keys::kExposedPerUnitNs, d.exposed_comm_per_unit);
  JsonChange(w, diff_keys::kWaitPerUnitNs, d.comm_wait_per_unit);
  w.EndObject();

  JsonStartUp(w, d);

  Str(w, report_keys::kDevices);
  w.StartArray();
  for (const DeviceDiff& x : d.devices) JsonDeviceDiff(w, x);
  w.EndArray();
  for (const auto& [key, list] : {std::pair{diff_keys::kOnlyBefore, &d.only_before},
                                  std::pair{diff_keys::kOnlyAfter, &d.only_after}}) {
    Str(w, key);
    w.StartArray();
    for (const DiffDevice& x : *list) JsonDevice(w, x);
    w.EndArray();
  }

  Str(w, report_keys::kAdvice);
  w.StartArray();
  for (const AdviceChange& a : d.advice) JsonAdvice(w, a);
  w.EndArray();
}

std::string JsonText(const ReportDiff& d) {
  return json_fields::Document(ReportDiff::kSchema, [&](Json& w) { JsonMembers(w, d); });
}

}  // namespace

std::string WriteDiffText(const ReportDiff& d) {
  std::string out = "gpuidle diff: what changed from before to after\n";
  absl::StrAppend(&out, RunLine(d.before, d.steps, false), RunLine(d.after, d.steps, true));
  Comparability(d, &out);
  absl::StrAppend(&out, "\n", Wrap(Printable(d.verdict.text), "", "  "));
  Steady(d, &out);
  Causes(d, &out);
  Communication(d, &out);
  StartUp(d, &out);
  Devices(d, &out);
  AdviceSection(d, &out);
  Caveats(d, &out);
  return out;
}

std::string WriteDiffJson(const ReportDiff& d) { return JsonText(d); }

absl::StatusOr<std::string> WriteDiff(const ReportDiff& diff, absl::string_view format) {
  if (format == "text" || format == "txt") return WriteDiffText(diff);
  if (format == "json") return WriteDiffJson(diff);
  return absl::InvalidArgumentError(
      absl::StrCat("unknown diff format \"", Printable(format), "\" (formats: text, json)"));
}

}  // namespace gpuidle::internal
