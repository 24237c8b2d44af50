#include "analysis/host_stacks.h"

#include <algorithm>
#include <array>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "analysis/python_frames.h"

namespace gpuidle::internal {
namespace {

using Frame = PythonFrame;

bool AnyOf(absl::string_view s, std::initializer_list<absl::string_view> needles) {
  for (absl::string_view n : needles) {
    if (absl::StrContains(s, n)) return true;
  }
  return false;
}

// Python's own regular-expression compiler is not JIT compilation.
bool IsRegexModule(absl::string_view file) {
  return AnyOf(file, {"/re/", "sre_compile", "/re.py", "fnmatch"}) || file == "re.py";
}

// Compile-time code only: the frames of a compiled program's every call (Dynamo's eval_frame
// wrappers, Inductor's runtime, CUDA-graph trees) are not compilation.
bool IsCompilation(const Frame& f) {
  if (AnyOf(f.file, {"torch/_dynamo/eval_frame", "torch/_inductor/runtime/", "output_code.py",
                     "cudagraph_trees", "torch/_compile.py"})) {
    return false;
  }
  if (AnyOf(f.file, {"torch/_dynamo/convert_frame",
                     "torch/_dynamo/symbolic_convert",
                     "torch/_dynamo/output_graph",
                     "torch/_dynamo/variables/",
                     "torch/_dynamo/backends/",
                     "torch/_inductor/compile_fx",
                     "torch/_inductor/graph.py",
                     "torch/_inductor/scheduler",
                     "torch/_inductor/codegen/",
                     "torch/_inductor/select_algorithm",
                     "torch/_inductor/async_compile",
                     "torch/_inductor/codecache",
                     "torch/_inductor/lowering",
                     "torch/_functorch/aot_autograd",
                     "torch/_functorch/_aot_autograd",
                     "torch/fx/experimental/proxy_tensor",
                     "triton/compiler/",
                     "jax/_src/compiler.py",
                     "jax/_src/interpreters/mlir.py",
                     "cupy/cuda/compiler",
                     "numba/core/compiler",
                     "numba/cuda/compiler"})) {
    return true;
  }
  // Compiler entry points by name, in library code (Python's own re.compile aside).
  const std::string function = absl::AsciiStrToLower(f.function);
  return !IsRegexModule(f.file) &&
         (absl::StartsWith(function, "backend_compile") || function == "compile_or_get_cached" ||
          absl::StrContains(function, "compile_module") || function == "compile_with_cache" ||
          absl::StrContains(function, "nvrtc"));
}

bool IsInputPipeline(const Frame& f) {
  if (AnyOf(f.file, {"torch/utils/data/", "torchvision/transforms", "torchvision/io",
                     "torchvision/datasets", "PIL/", "datasets/arrow_dataset",
                     "datasets/formatting", "webdataset/", "nvidia/dali",
                     "lightning/pytorch/loops/fetchers", "torchdata/", "decord/", "cv2/"})) {
    return true;
  }
  const absl::string_view fn = f.function;
  // Decoding images, audio, records; not a tokenizer decoding generated text.
  const bool decoding = absl::StrContains(fn, "decode") && !absl::StrContains(f.file, "tokeniz");
  return fn == "__getitem__" || fn == "__getitems__" || absl::StrContains(fn, "collate") ||
         decoding || fn == "load_batch" || fn == "next_batch";
}

bool IsCheckpointing(const Frame& f) {
  if (AnyOf(f.file, {"torch/serialization.py", "safetensors/", "torch/distributed/checkpoint",
                     "orbax/", "lightning/fabric/utilities/cloud_io"})) {
    return true;
  }
  return AnyOf(f.function, {"save_checkpoint", "save_pretrained", "save_model"});
}

bool IsLogging(const Frame& f) {
  if (AnyOf(f.file,
            {"logging/__init__.py", "torch/utils/tensorboard", "tensorboard/", "wandb/", "mlflow/",
             "tqdm/", "lightning/pytorch/loggers", "lightning/pytorch/callbacks/progress"})) {
    return true;
  }
  return AnyOf(f.function, {"log_metrics"});
}

// Library code: installed packages and Python's standard library.
bool IsLibraryFrame(const Frame& f) {
  const absl::string_view file = f.file;
  if (file.empty() || absl::StartsWith(file, "<")) return true;
  return AnyOf(file, {"site-packages/", "dist-packages/", "/lib/python3", "/lib64/python3"}) ||
         absl::StartsWith(file, "torch/") || absl::StartsWith(file, "threading.py") ||
         absl::StrContains(file, "/gpuidle/_");  // gpuidle's own wrappers
}

std::vector<absl::string_view> Frames(absl::string_view stack) {
  return absl::StrSplit(stack, '\n', absl::SkipEmpty());
}

}  // namespace

absl::string_view HostActivityName(HostActivity a) {
  switch (a) {
    case HostActivity::kCompilation:
      return "compilation";
    case HostActivity::kInputPipeline:
      return "input pipeline";
    case HostActivity::kCheckpointing:
      return "checkpointing";
    case HostActivity::kLogging:
      return "logging";
    case HostActivity::kOther:
      break;
  }
  return "Python code";
}

HostActivity ClassifyStack(absl::string_view stack) {
  bool input = false, save = false, log = false;
  for (absl::string_view text : Frames(stack)) {
    const Frame f = ParsePythonFrame(text);
    if (IsCompilation(f)) return HostActivity::kCompilation;
    input = input || IsInputPipeline(f);
    save = save || IsCheckpointing(f);
    log = log || IsLogging(f);
  }
  if (input) return HostActivity::kInputPipeline;
  if (save) return HostActivity::kCheckpointing;  // a checkpoint that logs is a checkpoint
  if (log) return HostActivity::kLogging;
  return HostActivity::kOther;
}

std::string DisplayFrame(absl::string_view stack) {
  const std::vector<absl::string_view> frames = Frames(stack);
  if (frames.empty()) return "";
  for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
    const Frame f = ParsePythonFrame(*it);
    if (!IsLibraryFrame(f)) return DescribePythonFrame(f);
  }
  return DescribePythonFrame(ParsePythonFrame(frames.back()));
}

HostStacks::HostStacks(const Timeline& timeline, const RangeIndex& python_frames)
    : timeline_(timeline), python_frames_(python_frames) {
  python_threads_ = python_frames.Threads();
  has_python_frames_ = !python_threads_.empty();
}

int32_t HostStacks::InternFrame(std::string frame) {
  auto [it, inserted] = frame_ids_.try_emplace(frame, static_cast<int32_t>(frames_.size()));
  if (inserted) frames_.push_back(std::move(frame));
  return it->second;
}

HostStacks::Classified HostStacks::ClassifySample(StringId stack) {
  auto it = by_stack_.find(stack);
  if (it != by_stack_.end()) return it->second;
  const absl::string_view text = timeline_.strings.Get(stack);
  std::string frame = DisplayFrame(text);
  const Classified c{ClassifyStack(text), frame.empty() ? -1 : InternFrame(std::move(frame))};
  by_stack_.emplace(stack, c);
  return c;
}

// The Python frames around t on thread, as one stack (outermost first).
HostStacks::Classified HostStacks::ClassifyFramesAt(uint64_t thread, int64_t t) {
  const std::vector<int32_t> chain = python_frames_.Enclosing(thread, t);
  if (chain.empty()) return Classified{HostActivity::kOther, -1};
  auto it = by_innermost_range_.find(chain.front());
  if (it != by_innermost_range_.end()) return it->second;
  std::string stack;
  for (auto r = chain.rbegin(); r != chain.rend(); ++r) {
    absl::StrAppend(&stack, stack.empty() ? "" : "\n",
                    timeline_.strings.Get(timeline_.ranges[*r].name));
  }
  const Classified c{ClassifyStack(stack), InternFrame(DisplayFrame(stack))};
  by_innermost_range_.emplace(chain.front(), c);
  return c;
}

// Python threads other than the launching ones looked at for a stretch without evidence.
constexpr size_t kMaxOtherPythonThreads = 64;

int32_t HostStacks::EvidenceFor(const absl::flat_hash_set<uint64_t>& threads, int64_t start,
                                int64_t end) {
  if (end <= start || empty()) return -1;
  // Votes per activity, and per activity the frames that showed it.
  int64_t votes[kNumHostActivities] = {};
  std::vector<std::pair<HostActivity, int32_t>> shown;
  auto vote = [&](const Classified& c) {
    if (c.frame < 0) return;
    ++votes[static_cast<int>(c.activity)];
    shown.emplace_back(c.activity, c.frame);
  };
  const std::vector<HostSample>& samples = timeline_.samples;
  auto first = std::lower_bound(samples.begin(), samples.end(), start,
                                [](const HostSample& s, int64_t v) { return s.time_ns < v; });
  for (int pass = 0; pass < 2 && shown.empty(); ++pass) {
    for (auto s = first; s != samples.end() && s->time_ns < end; ++s) {
      if (pass == 0 && !threads.contains(s->thread)) continue;
      vote(ClassifySample(s->stack));
    }
  }
  if (shown.empty() && has_python_frames_) {
    // Traces with Python frames (torch.profiler with_stack): look at a few instants, first on
    // the given threads, then on the first kMaxOtherPythonThreads others (a trace may hold
    // thousands of Python threads: a look at each, per stretch, would be quadratic).
    const auto look = [&](uint64_t thread) {
      for (int k = 1; k <= 3; ++k) vote(ClassifyFramesAt(thread, start + (end - start) * k / 4));
    };
    std::vector<uint64_t> given;  // in order: the votes' ties go to the first frame shown
    for (uint64_t thread : threads) {
      if (std::binary_search(python_threads_.begin(), python_threads_.end(), thread)) {
        given.push_back(thread);
      }
    }
    std::sort(given.begin(), given.end());
    for (uint64_t thread : given) look(thread);
    for (size_t i = 0; i < python_threads_.size() && i < kMaxOtherPythonThreads && shown.empty();
         ++i) {
      look(python_threads_[i]);
    }
  }
  if (shown.empty()) return -1;
  return Decide(votes, shown);
}

int32_t HostStacks::Decide(const int64_t (&votes)[kNumHostActivities],
                           const std::vector<std::pair<HostActivity, int32_t>>& shown) {
  int best = 0;
  for (int a = 1; a < kNumHostActivities; ++a) {
    if (votes[a] > votes[best]) best = a;  // ties keep the more telling (lower) activity
  }
  const auto activity = static_cast<HostActivity>(best);
  // The frame most samples of that activity showed.
  absl::flat_hash_map<int32_t, int64_t> count;
  int32_t frame = -1;
  for (const auto& [a, f] : shown) {
    if (a != activity) continue;
    const int64_t n = ++count[f];
    if (frame < 0 || n > count[frame]) frame = f;
  }
  return InternEvidence(activity, frame, votes[best]);
}

int32_t HostStacks::InternEvidence(HostActivity activity, int32_t frame, int64_t samples) {
  auto [it, inserted] = evidence_ids_.try_emplace(std::make_pair(static_cast<int>(activity), frame),
                                                  static_cast<int32_t>(evidence_.size()));
  if (inserted) evidence_.push_back(StackEvidence{activity, frames_[frame], 0});
  evidence_[it->second].samples += samples;
  return it->second;
}

std::vector<HostStacks::Episode> HostStacks::CompilationEpisodes(int64_t max_gap_ns) {
  struct Open {
    int64_t start_ns, last_ns;
    int32_t frame;
  };
  absl::flat_hash_map<uint64_t, Open> open;
  std::vector<Episode> out;
  auto close = [&](uint64_t thread, const Open& o) {
    if (o.last_ns > o.start_ns) {
      out.push_back(Episode{o.start_ns, o.last_ns, frames_[o.frame], thread});
    }
  };
  for (const HostSample& s : timeline_.samples) {
    const Classified c = ClassifySample(s.stack);
    auto it = open.find(s.thread);
    const bool compiling = c.activity == HostActivity::kCompilation && c.frame >= 0;
    if (it != open.end() && (!compiling || s.time_ns - it->second.last_ns > max_gap_ns)) {
      close(s.thread, it->second);
      open.erase(it);
      it = open.end();
    }
    if (!compiling) continue;
    if (it == open.end()) {
      open.emplace(s.thread, Open{s.time_ns, s.time_ns, c.frame});
    } else {
      it->second.last_ns = s.time_ns;
    }
  }
  for (const auto& [thread, o] : open) close(thread, o);
  std::sort(out.begin(), out.end(),
            [](const Episode& a, const Episode& b) { return a.start_ns < b.start_ns; });
  return out;
}

std::vector<StackSpan> HostStacks::SpansFor(const absl::flat_hash_set<uint64_t>& threads,
                                            int64_t start, int64_t end) {
  const std::vector<HostSample>& samples = timeline_.samples;
  auto first = std::lower_bound(samples.begin(), samples.end(), start,
                                [](const HostSample& s, int64_t v) { return s.time_ns < v; });
  // Runs of consecutive samples that show one activity.
  struct Run {
    int64_t first_ns, last_ns;
    HostActivity activity;
    absl::flat_hash_map<int32_t, int64_t> frames;
  };
  std::vector<Run> runs;
  for (int pass = 0; pass < 2 && runs.empty(); ++pass) {
    for (auto s = first; s != samples.end() && s->time_ns < end; ++s) {
      if (pass == 0 && !threads.contains(s->thread)) continue;
      const Classified c = ClassifySample(s->stack);
      if (c.frame < 0) continue;
      if (runs.empty() || runs.back().activity != c.activity) {
        runs.push_back(Run{s->time_ns, s->time_ns, c.activity, {}});
      }
      runs.back().last_ns = s->time_ns;
      ++runs.back().frames[c.frame];
    }
  }
  if (runs.empty()) return {StackSpan{start, end, EvidenceFor(threads, start, end)}};
  std::vector<StackSpan> out;
  for (size_t i = 0; i < runs.size(); ++i) {
    int32_t frame = -1;
    int64_t most = 0, total = 0;
    for (const auto& [f, n] : runs[i].frames) {
      total += n;
      if (n > most || (n == most && f < frame)) std::tie(frame, most) = std::make_pair(f, n);
    }
    const int64_t from = i == 0 ? start : out.back().end_ns;
    // The midpoint without overflow near the ends of the clock (the runs are in time order).
    const int64_t to =
        i + 1 == runs.size() ? end : runs[i].last_ns + (runs[i + 1].first_ns - runs[i].last_ns) / 2;
    out.push_back(StackSpan{from, to, InternEvidence(runs[i].activity, frame, total)});
  }
  return out;
}

}  // namespace gpuidle::internal
