// Before and after: what changed between two runs of a program, so that you see whether a fix
// worked (docs/ANALYSIS.md, "Before and after").
//
//   absl::StatusOr<gpuidle::ReportDiff> diff =
//       gpuidle::DiffReportFiles({"before.json.gz"}, {"after.json.gz"});
//   if (!diff.ok()) { std::cerr << diff.status() << "\n"; return 1; }
//   std::cout << diff->verdict.text << "\n";  // "step time 22.8 -> 13.3 ms (-42%): ..."
//   std::cout << *gpuidle::FormatDiff(*diff, "text");
//
// Runs of different lengths compare through their steady states: lost time per step where both
// runs have steps, else per second of steady state (ReportDiff::unit). Runs that look like
// different programs or set-ups are said to be so (ReportDiff::comparability) and get no verdict
// on a fix.
#ifndef GPUIDLE_INCLUDE_GPUIDLE_DIFF_H_
#define GPUIDLE_INCLUDE_GPUIDLE_DIFF_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpuidle/report.h"

namespace gpuidle {

// A figure before and after (nanoseconds, counts).
struct Change {
  int64_t before = 0;
  int64_t after = 0;
  int64_t Delta() const { return after - before; }
  // (after - before) / before; nullopt when before is 0.
  std::optional<double> Relative() const {
    if (before == 0) return std::nullopt;
    return (static_cast<double>(after) - static_cast<double>(before)) / static_cast<double>(before);
  }
};

// A share of the steady state (0..1) before and after.
struct ShareChange {
  double before = 0;
  double after = 0;
  double Delta() const { return after - before; }
};

// How lost time is put on one scale, so that runs of different lengths compare.
enum class DiffUnit : int {
  kPerStep,    // nanoseconds per step (per device and step): both runs have steps
  kPerSecond,  // nanoseconds per second of steady state: a run without steps
};

// One run as the diff saw it.
struct DiffRun {
  std::string source;  // Report::source
  std::vector<std::string> inputs;
  std::string step_source;  // "" without steps
  int devices = 0;          // devices that ran work
  // "complete", "records_lost" or "unknown" (the source does not say), as in the report.
  std::string completeness;
  bool sampled = false;  // a sampled collection: the figures sum traced windows (Coverage)
  int64_t warnings = 0;  // the report's own warnings
};

// One kind of one-off start-up time, on the device with the longest start-up of each run.
struct OneOffChange {
  OneOffKind kind = OneOffKind::kSetUp;
  Change ns;
};

// A device of the run: rank, CUDA ordinal, name.
struct DiffDevice {
  std::optional<int> rank;
  int device = 0;
  std::string name;
};

// One device present in both runs (matched by rank and device; see ReportDiff::devices).
struct DeviceDiff {
  DiffDevice before;
  DiffDevice after;
  DiffUnit unit = DiffUnit::kPerSecond;  // of lost_by_cause: per step where both have steps
  Change steady_ns;
  Change step_count;
  std::optional<Change> mean_step_ns;  // both runs of the device have steps
  ShareChange busy_share;              // of the steady state
  ShareChange lost_share;              // idle plus waiting for peers, of the steady state
  std::array<Change, kNumCauses> lost_by_cause{};  // per unit
  std::optional<Change> comm_wait_ns;              // per unit; where either run knows it
  // The subcause with most lost time in each run; nullopt without lost time.
  std::optional<Subcause> dominant_before;
  std::optional<Subcause> dominant_after;
};

// The advice of the two runs, by subcause.
enum class AdviceStatus : int {
  kResolved,  // advised before, not after: the cause (nearly) disappeared
  // Advised in both runs; or advised after only where the subcause lost time before too (it was
  // there, below the advice's threshold).
  kRemaining,
  kNew,  // advised after only, and the subcause lost no time at all before
};

struct AdviceChange {
  Subcause subcause = Subcause::kUnattributed;
  AdviceStatus status = AdviceStatus::kRemaining;
  std::optional<double> share_before;  // of lost time, 0..1; nullopt: no advice in that run
  std::optional<double> share_after;
  // What the run before predicted the fix would gain per step (Advice::gain_per_step_ns).
  std::optional<int64_t> predicted_gain_per_step_ns;
  std::string fix;  // the latest run's advice
};

// Why a comparison is weaker than it looks; it is still made.
struct DiffCaveat {
  std::string code;  // "different_step_sources", ... (docs/REPORT_SCHEMA.md, "gpuidle.diff/1")
  std::string message;
};

enum class DiffOutcome : int {
  kImproved,
  kRegressed,
  kUnchanged,
  // The runs look like different programs or set-ups (DiffComparability): the figures are
  // compared, but they say nothing about a fix.
  kNotComparable,
};

// Whether the two runs are the same program on the same set-up, so that their difference can be
// read as the effect of a fix (docs/ANALYSIS.md, "Comparable runs"). The figures are compared
// either way; a run that is not comparable gets no verdict on a fix.
struct DiffComparability {
  bool comparable = true;
  // Why not: "kernels_per_step", "kernel_names", "device_count", "gpu_model", "step_source"
  // (docs/REPORT_SCHEMA.md); empty when comparable.
  std::vector<DiffCaveat> reasons;
  // Kernels per step of each run (its steady-state kernels over its steps, summed over its
  // devices); nullopt unless both runs have steps and kernels.
  std::optional<double> kernels_per_step_before;
  std::optional<double> kernels_per_step_after;
  // Distinct kernel names each report gives (its launch-bound offenders and the kernels that
  // ended its longest gaps), and how many of them both give.
  int64_t kernel_names_before = 0;
  int64_t kernel_names_after = 0;
  int64_t kernel_names_shared = 0;
};

struct DiffVerdict {
  DiffOutcome outcome = DiffOutcome::kUnchanged;
  // "mean_step" (both runs have steps) or "lost_share" (lost share of the steady state).
  std::string metric;
  // The subcause whose lost time per unit moved most in the outcome's direction: fell most for
  // an improvement, rose most for a regression; nullopt when unchanged, not comparable or none
  // moved.
  std::optional<Subcause> main_change;
  bool weak = false;  // there are caveats, or the runs are not comparable
  // "step time 22.8 -> 13.3 ms (-42%): data_starved.dataloader -20.0 ms/step; the fix worked";
  // "not comparable (kernels_per_step): step time ... between what look like different
  // programs; no verdict on a fix".
  std::string text;
};

struct ReportDiff {
  static constexpr const char* kSchema = "gpuidle.diff/1";

  DiffRun before;
  DiffRun after;
  DiffUnit unit = DiffUnit::kPerSecond;  // of every *_per_unit figure

  // The steady state, over all devices of each run.
  Change steady_ns;                      // summed over the devices
  Change steps;                          // steps of the device with the most
  std::optional<Change> mean_step_ns;    // both runs have steps: steady time / steps, per device
  std::optional<Change> median_step_ns;  // ... of the step rows the reports list
  ShareChange busy_share;
  ShareChange idle_share;
  ShareChange lost_share;  // idle plus waiting for peers
  Change busy_per_unit;    // GPU work per step (per second): did the work itself change?
  // Lost time per unit by cause and subcause: idle time, plus collectives waiting for peers under
  // sync_bound.comm_wait.
  std::array<Change, kNumCauses> lost_by_cause{};
  std::array<Change, kNumSubcauses> lost_by_subcause{};
  Change lost_per_unit;
  // Communication per unit: collectives executing, exposed (no other kernel), waiting for peers
  // (where either run was merged from all its ranks).
  Change comm_per_unit;
  Change exposed_comm_per_unit;
  std::optional<Change> comm_wait_per_unit;
  // Start-up, apart from the steady state: the longest of each run's devices, and its parts.
  Change start_up_ns;
  std::vector<OneOffChange> start_up_parts;  // kinds with time in either run, most after first

  std::vector<DeviceDiff> devices;      // matched devices, in the order of the run after
  std::vector<DiffDevice> only_before;  // devices of one run only
  std::vector<DiffDevice> only_after;
  std::vector<AdviceChange> advice;  // resolved, then remaining, then new
  DiffComparability comparability;   // decided before the verdict, which it can withhold
  std::vector<DiffCaveat> caveats;
  DiffVerdict verdict;
};

// "per_step", "per_second"; "resolved", "remaining", "new"; "improved", "regressed",
// "unchanged", "not_comparable".
GPUIDLE_EXPORT absl::string_view DiffUnitName(DiffUnit u);
GPUIDLE_EXPORT absl::string_view AdviceStatusName(AdviceStatus s);
GPUIDLE_EXPORT absl::string_view DiffOutcomeName(DiffOutcome o);

}  // namespace gpuidle

#endif  // GPUIDLE_INCLUDE_GPUIDLE_DIFF_H_
