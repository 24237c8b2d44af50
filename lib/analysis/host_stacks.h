// What a host thread was doing during a long stretch away from CUDA, from its Python stack:
// sampled stacks of live Python processes (Timeline::samples) or the Python frames of a
// PyTorch-profiler trace recorded with_stack (docs/ANALYSIS.md, "Host-stack evidence").
#ifndef GPUIDLE_LIB_ANALYSIS_HOST_STACKS_H_
#define GPUIDLE_LIB_ANALYSIS_HOST_STACKS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "analysis/range_index.h"
#include "model/timeline.h"

namespace gpuidle::internal {

// The kinds of host work a stack can show, most telling first.
enum class HostActivity : uint8_t {
  kCompilation,    // a JIT compiler (Dynamo/Inductor/Triton, XLA, NVRTC, CuPy, Numba)
  kInputPipeline,  // loading or preparing input (__getitem__, collate, decoding, transforms)
  kCheckpointing,  // saving state: torch.save, safetensors, distributed checkpoints
  kLogging,        // logging, progress bars, metrics
  kOther,          // other Python code: the framework's or the program's own glue
};
inline constexpr int kNumHostActivities = static_cast<int>(HostActivity::kOther) + 1;

absl::string_view HostActivityName(HostActivity a);  // "input pipeline"

// The activity one stack shows ('\n'-separated frames, outermost first, each either
// "file:line function" or PyTorch's "file(line): function").
HostActivity ClassifyStack(absl::string_view stack);

// The frame to show for a stack, as "file:line function": the innermost frame of the
// program's own code, or the innermost frame when all are library code. "" for no frames.
std::string DisplayFrame(absl::string_view stack);

struct StackEvidence {
  HostActivity activity = HostActivity::kOther;
  std::string frame;  // DisplayFrame of the stacks that showed it
  int64_t samples = 0;
};

// A part of a host stretch and what its stacks showed (evidence -1: no stack).
struct StackSpan {
  int64_t start_ns;
  int64_t end_ns;
  int32_t evidence;
};

class HostStacks {
 public:
  HostStacks(const Timeline& timeline, const RangeIndex& python_frames);

  // What the stacks of `threads` (or, when they have none there, of any sampled thread) show
  // during [start, end): the index of an evidence record, or -1 when there is no stack. The
  // activity is the one most samples show; ties go to the more telling one.
  int32_t EvidenceFor(const absl::flat_hash_set<uint64_t>& threads, int64_t start, int64_t end);

  // [start, end) cut where the sampled activity changes (halfway between two samples), each
  // part with the evidence of its samples; one part when the stacks come from a profiler
  // trace's Python frames or when there are none.
  std::vector<StackSpan> SpansFor(const absl::flat_hash_set<uint64_t>& threads, int64_t start,
                                  int64_t end);

  // Stretches of JIT compilation seen in the samples: per thread, from a sample in a compiler
  // to the last of the compiler samples that follow it, each less than `max_gap_ns` after the
  // one before and with no sample of other work between. They bridge the compiler's own CUDA
  // work (autotuning), during which no sample is taken.
  struct Episode {
    int64_t start_ns;
    int64_t end_ns;
    std::string frame;
    uint64_t thread;
  };
  std::vector<Episode> CompilationEpisodes(int64_t max_gap_ns);

  const StackEvidence& evidence(int32_t i) const { return evidence_[i]; }
  bool empty() const { return timeline_.samples.empty() && !has_python_frames_; }

 private:
  struct Classified {
    HostActivity activity;
    int32_t frame;  // index into frames_
  };
  Classified ClassifySample(StringId stack);
  Classified ClassifyFramesAt(uint64_t thread, int64_t t);
  int32_t InternFrame(std::string frame);
  int32_t InternEvidence(HostActivity activity, int32_t frame, int64_t samples);
  int32_t Decide(const int64_t (&votes)[kNumHostActivities],
                 const std::vector<std::pair<HostActivity, int32_t>>& shown);

  const Timeline& timeline_;
  const RangeIndex& python_frames_;
  bool has_python_frames_ = false;
  std::vector<uint64_t> python_threads_;
  absl::flat_hash_map<StringId, Classified> by_stack_;
  absl::flat_hash_map<int32_t, Classified> by_innermost_range_;
  std::vector<std::string> frames_;
  absl::flat_hash_map<std::string, int32_t> frame_ids_;
  std::vector<StackEvidence> evidence_;
  absl::flat_hash_map<std::pair<int, int32_t>, int32_t> evidence_ids_;
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_ANALYSIS_HOST_STACKS_H_
