#include "analysis/python_frames.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace gpuidle::internal {

PythonFrame ParsePythonFrame(absl::string_view text) {
  PythonFrame f;
  const size_t paren = text.rfind("): ");
  if (paren != absl::string_view::npos) {
    const size_t open = text.rfind('(', paren);
    if (open != absl::string_view::npos) {
      f.file = text.substr(0, open);
      f.line = text.substr(open + 1, paren - open - 1);
      f.function = text.substr(paren + 3);
      f.line_starts_function = true;
      return f;
    }
  }
  // The first ":<digits> ": a path may hold spaces and colons, a line number only digits.
  for (size_t colon = text.find(':'); colon != absl::string_view::npos;
       colon = text.find(':', colon + 1)) {
    size_t end = colon + 1;
    while (end < text.size() && absl::ascii_isdigit(static_cast<unsigned char>(text[end]))) ++end;
    if (end == colon + 1 || end >= text.size() || text[end] != ' ') continue;
    f.file = text.substr(0, colon);
    f.line = text.substr(colon + 1, end - colon - 1);
    f.function = text.substr(end + 1);
    return f;
  }
  f.function = text;
  return f;
}

std::string DescribePythonFrame(const PythonFrame& f) {
  if (f.file.empty()) return std::string(f.function);
  if (f.line_starts_function) {
    return absl::StrCat(f.function, "() in ", f.file, " (def at line ", f.line, ")");
  }
  return absl::StrCat(f.file, ":", f.line, " ", f.function);
}

std::optional<PythonFrame> ParseFunctionDescription(absl::string_view text, size_t* start) {
  constexpr absl::string_view kDef = " (def at line ";
  constexpr absl::string_view kIn = "() in ";
  const size_t def = text.rfind(kDef);
  if (def == absl::string_view::npos || !absl::EndsWith(text, ")")) return std::nullopt;
  const size_t in = text.rfind(kIn, def);
  if (in == absl::string_view::npos) return std::nullopt;
  // Function names hold no space: the description starts after the last one before "() in ".
  const size_t space = text.rfind(' ', in);
  const size_t begin = space == absl::string_view::npos ? 0 : space + 1;
  PythonFrame f;
  f.function = text.substr(begin, in - begin);
  f.file = text.substr(in + kIn.size(), def - in - kIn.size());
  f.line = text.substr(def + kDef.size(), text.size() - 1 - def - kDef.size());
  f.line_starts_function = true;
  if (f.function.empty() || f.file.empty() || f.line.empty()) return std::nullopt;
  if (start != nullptr) *start = begin;
  return f;
}

}  // namespace gpuidle::internal
