#include "analysis/periodic_work.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "analysis/python_frames.h"

namespace gpuidle::internal {
namespace {

// Pieces of one activity closer than this are one occurrence when the trace has no steps.
constexpr int64_t kJoinWithoutStepsNs = 50'000'000;

constexpr absl::string_view kCheckpointing = "checkpointing";
constexpr absl::string_view kEvaluation = "evaluation";
constexpr absl::string_view kLogging = "logging";

// "file" of "file:line".
std::string FileOf(absl::string_view line) { return std::string(line.substr(0, line.rfind(':'))); }

bool AllDigits(absl::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(c); });
}

absl::string_view FixFor(absl::string_view activity) {
  if (activity == kCheckpointing) {
    return "checkpoint less often, or without stopping the GPU: copy the state into pinned host "
           "memory with .to(\"cpu\", non_blocking=True) and write it from a background thread "
           "(torch.distributed.checkpoint.async_save does both)";
  }
  if (activity == kEvaluation) {
    return "evaluate less often or on fewer batches, overlap it with training (another CUDA "
           "stream or process), and batch its host reads: one .item()/.tolist() per evaluation, "
           "not per batch";
  }
  return "log every N steps, and keep the metrics on the GPU between logs: accumulate tensors "
         "and read them with one .item()/.tolist() when logging";
}

}  // namespace

absl::string_view ActivityOfFunction(absl::string_view function) {
  // By the words of the name ("save_checkpoint", "_log_to_wandb", "validation_step"), so that
  // log_softmax, log_prob or logits are no logging, nor a value named "saved" a checkpoint.
  const std::string f = absl::AsciiStrToLower(function);
  const std::vector<absl::string_view> words = absl::StrSplit(f, '_', absl::SkipEmpty());
  const auto has = [&](std::initializer_list<absl::string_view> any) {
    return std::any_of(words.begin(), words.end(), [&](absl::string_view w) {
      return std::find(any.begin(), any.end(), w) != any.end();
    });
  };
  if (has({"checkpoint", "checkpointing", "ckpt", "save"})) return kCheckpointing;
  if (has({"eval", "evaluate", "evaluation", "validate", "validation"}) || f == "test_step" ||
      f == "predict_step" || f == "prediction_step") {
    return kEvaluation;
  }
  if (has({"softmax", "prob", "probs", "sigmoid", "likelihood", "sum", "exp", "det", "space"})) {
    return "";  // the mathematical log
  }
  if (has({"log", "logging", "logger"}) || f == "print_metrics" || f == "report_metrics") {
    return kLogging;
  }
  return "";
}

ProgramLine ParseProgramLine(absl::string_view site) {
  ProgramLine p;
  // gpuidle's description of a torch.profiler frame: "f() in file (def at line N)".
  if (const auto f = ParseFunctionDescription(site, nullptr); f.has_value()) {
    if (!AllDigits(f->line)) return p;
    p.line = absl::StrCat(f->file, ":", f->line);
    p.function = std::string(f->function);
    p.line_starts_function = true;
    return p;
  }
  // A framework op first ("aten::copy_ at file:line in f"): the Python frame is after it.
  if (const size_t at = site.rfind(" at "); at != absl::string_view::npos) {
    site.remove_prefix(at + 4);
  }
  absl::string_view place = site, function;
  if (const size_t in = site.find(" in "); in != absl::string_view::npos) {
    place = site.substr(0, in);
    function = site.substr(in + 4);
  } else if (const size_t paren = site.find("): "); paren != absl::string_view::npos) {
    // torch.profiler's "file(line): function".
    const size_t open = site.rfind('(', paren);
    if (open == absl::string_view::npos || !AllDigits(site.substr(open + 1, paren - open - 1))) {
      return p;
    }
    p.line = absl::StrCat(site.substr(0, open), ":", site.substr(open + 1, paren - open - 1));
    p.function = std::string(site.substr(paren + 3));
    p.line_starts_function = true;
    return p;
  } else if (const size_t space = site.rfind(' '); space != absl::string_view::npos) {
    place = site.substr(0, space);  // a sampled frame: "file:line function"
    function = site.substr(space + 1);
  }
  const size_t colon = place.rfind(':');
  if (colon == absl::string_view::npos || !AllDigits(place.substr(colon + 1))) return p;
  p.line = std::string(place);
  p.function = std::string(function);
  return p;
}

void PeriodicWorkTable::LearnFunctions() {
  if (learned_functions_) return;
  learned_functions_ = true;
  const Timeline& t = index_.timeline();
  absl::flat_hash_set<StringId> names;
  for (const Range& r : t.ranges) {
    if (r.kind != RangeKind::kPython || !names.insert(r.name).second) continue;
    const ProgramLine* site = Parsed(t.strings.Get(r.name));
    if (site == nullptr) continue;
    const absl::string_view activity = ActivityOfFunction(site->function);
    if (!activity.empty()) activity_of_line_.try_emplace(site->line, activity);
  }
}

const ProgramLine* PeriodicWorkTable::Parsed(absl::string_view site) const {
  auto [it, inserted] = lines_.try_emplace(site);
  if (inserted) it->second = ParseProgramLine(site);
  return it->second.line.empty() ? nullptr : &it->second;
}

const ProgramLine* PeriodicWorkTable::SiteOf(const DeviceTimeline& device,
                                             const IdlePiece& piece) const {
  const Timeline& t = index_.timeline();
  int32_t call = -1;
  switch (piece.subcause) {
    case Subcause::kDataLoader:  // the input pipeline is a cause of its own
      return nullptr;
    case Subcause::kLaunchOverhead:
    case Subcause::kKernelGap:
    case Subcause::kRequestsWaiting:
    case Subcause::kUnattributed:
      if (piece.next_op >= 0) call = index_.IssuingCall(device, piece.next_op);
      break;
    default:
      call = piece.call;
      break;
  }
  if (call < 0) return nullptr;
  const HostCall& c = t.calls[call];
  // The call's Python frame, its name parsed once: a launch-bound run has a piece per kernel.
  const int32_t frame = index_.UserPythonFrame(c.thread, c.start_ns);
  return frame < 0 ? nullptr : Parsed(t.strings.Get(t.ranges[frame].name));
}

void PeriodicWorkTable::AddDevice(const DeviceTimeline& device,
                                  const std::vector<IdlePiece>& steady,
                                  const std::vector<Interval>& steps) {
  // The lines doing an activity: the program's functions named for one (once per timeline),
  // and the lines whose sampled stacks show one (the copies of a torch.save come from the line
  // whose stacks show torch/serialization.py).
  LearnFunctions();
  for (const IdlePiece& piece : steady) {
    if (piece.stack < 0) continue;
    const StackEvidence& ev = stacks_.evidence(piece.stack);
    const ProgramLine* site = Parsed(ev.frame);
    if (site == nullptr) continue;
    absl::string_view activity = ev.activity == HostActivity::kCheckpointing ? kCheckpointing
                                 : ev.activity == HostActivity::kLogging     ? kLogging
                                                                             : "";
    if (activity.empty()) activity = ActivityOfFunction(site->function);
    if (!activity.empty()) activity_of_line_.try_emplace(site->line, activity);
  }
  // Most programs have none: their pieces are not looked at (a launch-bound run has one per
  // kernel).
  if (activity_of_line_.empty()) return;
  std::vector<const ProgramLine*> seen(steady.size());  // owned by lines_
  for (size_t i = 0; i < steady.size(); ++i) {
    const IdlePiece& piece = steady[i];
    seen[i] =
        piece.stack >= 0 ? Parsed(stacks_.evidence(piece.stack).frame) : SiteOf(device, piece);
  }
  // Occurrences: per activity and function, the pieces of one step (or close together). The
  // lines of one function are one activity (a torch.save and the os.remove after it).
  struct Open {
    int64_t key = -1;  // the step, or the occurrence's ordinal without steps
    int64_t start_ns = 0;
    int64_t end_ns = 0;
  };
  std::map<RowId, Open> open;
  auto close = [&](const RowId& id, const Open& o) {
    Row& row = rows_[id];
    ++row.occurrences;
    row.span_ns += o.end_ns - o.start_ns;
  };
  for (size_t i = 0; i < steady.size(); ++i) {
    const IdlePiece& piece = steady[i];
    if (seen[i] == nullptr) continue;
    const ProgramLine& site = *seen[i];
    auto it = activity_of_line_.find(site.line);
    if (it == activity_of_line_.end()) continue;
    const RowId id{std::string(it->second), FileOf(site.line), site.function};
    const int64_t ns = piece.end_ns - piece.start_ns;
    Row& row = rows_[id];
    row.idle[piece.subcause] += ns;
    row.idle_by_line[site.line] += ns;
    if (site.line_starts_function) function_start_lines_.insert(site.line);
    int64_t key = -1;
    if (!steps.empty()) {
      auto step = std::upper_bound(steps.begin(), steps.end(), piece.start_ns,
                                   [](int64_t t, const Interval& s) { return t < s.end_ns; });
      key = step - steps.begin();
    }
    auto [o, inserted] = open.try_emplace(id);
    const bool same =
        !inserted && (steps.empty() ? piece.start_ns - o->second.end_ns < kJoinWithoutStepsNs
                                    : key == o->second.key);
    if (!same) {
      if (!inserted) close(id, o->second);
      o->second = Open{key, piece.start_ns, piece.end_ns};
    } else {
      o->second.end_ns = piece.end_ns;
    }
  }
  for (const auto& [id, o] : open) close(id, o);
}

void MergePeriodicWork(const std::vector<PeriodicWork>& more, std::vector<PeriodicWork>* into) {
  // Rows by activity and site: a lookup per row, not a search (issue 29's complexity budget).
  absl::flat_hash_map<std::pair<std::string, std::string>, size_t> index;
  index.reserve(into->size() + more.size());
  for (size_t i = 0; i < into->size(); ++i)
    index.try_emplace({(*into)[i].activity, (*into)[i].site}, i);
  for (const PeriodicWork& w : more) {
    const auto [it, added] = index.try_emplace({w.activity, w.site}, into->size());
    if (added) {
      into->push_back(w);
      continue;
    }
    PeriodicWork* same = &(*into)[it->second];
    same->occurrences += w.occurrences;
    same->span_ns += w.span_ns;
    same->idle_ns += w.idle_ns;
    same->idle += w.idle;
  }
  std::stable_sort(into->begin(), into->end(), [](const PeriodicWork& a, const PeriodicWork& b) {
    return a.idle_ns > b.idle_ns;
  });
}

std::vector<PeriodicWork> PeriodicWorkTable::Take(int64_t steady_ns, double min_share) const {
  std::vector<PeriodicWork> out;
  for (const auto& [id, row] : rows_) {
    const int64_t idle = row.idle.TotalNs();
    if (row.occurrences < 2 || steady_ns <= 0 ||
        static_cast<double>(idle) < min_share * static_cast<double>(steady_ns)) {
      continue;
    }
    PeriodicWork w;
    w.activity = std::get<0>(id);
    // The function's line with the most idle time names it.
    auto heaviest =
        std::max_element(row.idle_by_line.begin(), row.idle_by_line.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; });
    if (function_start_lines_.contains(heaviest->first) && !std::get<2>(id).empty()) {
      // Only the function's first line is known: name the function, not a line of a call.
      w.site = DescribePythonFrame(PythonFrame{std::get<1>(id),
                                               heaviest->first.substr(std::get<1>(id).size() + 1),
                                               std::get<2>(id), true});
    } else {
      w.site = std::get<2>(id).empty() ? heaviest->first
                                       : absl::StrCat(heaviest->first, " in ", std::get<2>(id));
    }
    w.occurrences = row.occurrences;
    w.span_ns = row.span_ns;
    w.idle_ns = idle;
    w.idle = row.idle;
    w.fix = std::string(FixFor(std::get<0>(id)));
    out.push_back(std::move(w));
  }
  std::sort(out.begin(), out.end(), [](const PeriodicWork& a, const PeriodicWork& b) {
    return a.idle_ns != b.idle_ns ? a.idle_ns > b.idle_ns : a.site < b.site;
  });
  return out;
}

}  // namespace gpuidle::internal
