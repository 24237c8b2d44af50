// Python frames as the inputs name them, and as a report shows them.
#ifndef GPUIDLE_LIB_ANALYSIS_PYTHON_FRAMES_H_
#define GPUIDLE_LIB_ANALYSIS_PYTHON_FRAMES_H_

#include <cstddef>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace gpuidle::internal {

struct PythonFrame {
  absl::string_view file;
  absl::string_view line;
  absl::string_view function;
  // torch.profiler's python_function events name the line the function starts at, not the line
  // that was running: a report must not present it as the line of a call.
  bool line_starts_function = false;
};

// Parses "file:line function" (gpuidle's samples: the running line) or "file(line): function"
// (torch.profiler's python_function names: the function's first line). Anything else is all
// function.
PythonFrame ParsePythonFrame(absl::string_view text);

// For a person: "train.py:42 step" where the line is the running one, "step() in train.py (def
// at line 40)" where it is only where the function starts.
std::string DescribePythonFrame(const PythonFrame& f);
inline std::string DescribePythonFrame(absl::string_view text) {
  return DescribePythonFrame(ParsePythonFrame(text));
}

// The frame at the end of text where it ends with DescribePythonFrame's "function() in file (def
// at line N)" (after a framework op's "aten::copy_ at "), with *start the position where the
// description begins; nullopt where it does not.
std::optional<PythonFrame> ParseFunctionDescription(absl::string_view text, size_t* start);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_ANALYSIS_PYTHON_FRAMES_H_
