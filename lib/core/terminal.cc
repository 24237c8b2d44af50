#include "core/terminal.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "core/text_safety.h"

namespace gpuidle::internal {
namespace {

constexpr char kEllipsis[] = "...";
constexpr char kReset[] = "\x1b[0m";

struct Range {
  uint32_t lo, hi;
};

// Combining marks and zero-width characters (the common blocks; a terminal shows them on the
// character before).
constexpr Range kZeroWidth[] = {
    {0x0300, 0x036f}, {0x0483, 0x0489}, {0x0591, 0x05bd},   {0x0610, 0x061a}, {0x064b, 0x065f},
    {0x0e31, 0x0e31}, {0x0e34, 0x0e3a}, {0x0e47, 0x0e4e},   {0x1ab0, 0x1aff}, {0x1dc0, 0x1dff},
    {0x200b, 0x200f}, {0x2028, 0x202e}, {0x2060, 0x206f},   {0x20d0, 0x20ff}, {0xfe00, 0xfe0f},
    {0xfe20, 0xfe2f}, {0xfeff, 0xfeff}, {0xe0100, 0xe01ef},
};

// East Asian Wide and Fullwidth characters, and the emoji that terminals draw two wide.
constexpr Range kWide[] = {
    {0x1100, 0x115f},   {0x231a, 0x231b},   {0x2329, 0x232a},   {0x23e9, 0x23ec},
    {0x2614, 0x2615},   {0x2648, 0x2653},   {0x26a1, 0x26a1},   {0x26bd, 0x26be},
    {0x2705, 0x2705},   {0x274c, 0x274c},   {0x2e80, 0x303e},   {0x3041, 0x33ff},
    {0x3400, 0x4dbf},   {0x4e00, 0x9fff},   {0xa000, 0xa4cf},   {0xa960, 0xa97f},
    {0xac00, 0xd7a3},   {0xf900, 0xfaff},   {0xfe10, 0xfe19},   {0xfe30, 0xfe6f},
    {0xff00, 0xff60},   {0xffe0, 0xffe6},   {0x16fe0, 0x18aff}, {0x1b000, 0x1b2ff},
    {0x1f004, 0x1f004}, {0x1f18e, 0x1f18e}, {0x1f191, 0x1f19a}, {0x1f200, 0x1f251},
    {0x1f300, 0x1f64f}, {0x1f680, 0x1f6ff}, {0x1f7e0, 0x1f7eb}, {0x1f900, 0x1f9ff},
    {0x1fa70, 0x1faff}, {0x20000, 0x2fffd}, {0x30000, 0x3fffd},
};

template <size_t N>
bool In(const Range (&ranges)[N], uint32_t cp) {
  for (const Range& r : ranges) {
    if (cp >= r.lo && cp <= r.hi) return true;
  }
  return false;
}

// One thing a terminal draws or obeys: an escape sequence, a code point or a stray byte.
struct Unit {
  size_t pos, len;
  size_t cols;
  bool escape;
};

// The length of the escape sequence at s[i] (ESC [ parameters, then a final byte from @ to ~),
// 0 if none starts there.
size_t EscapeLength(absl::string_view s, size_t i) {
  if (s[i] != '\x1b' || i + 1 >= s.size() || s[i + 1] != '[') return 0;
  for (size_t k = i + 2; k < s.size(); ++k) {
    const auto c = static_cast<unsigned char>(s[k]);
    if (c >= 0x40 && c <= 0x7e) return k + 1 - i;
    if (c < 0x20 || c > 0x3f) return 0;
  }
  return 0;
}

Unit NextUnit(absl::string_view s, size_t i) {
  if (const size_t esc = EscapeLength(s, i); esc > 0) return {i, esc, 0, true};
  uint32_t cp = 0;
  const size_t len = Utf8SequenceLength(s, i, &cp);
  if (len == 0) return {i, 1, 1, false};
  const size_t cols = In(kZeroWidth, cp) ? 0 : In(kWide, cp) ? 2 : 1;
  return {i, len, cols, false};
}

std::vector<Unit> Units(absl::string_view s) {
  std::vector<Unit> units;
  for (size_t i = 0; i < s.size();) {
    units.push_back(NextUnit(s, i));
    i += units.back().len;
  }
  return units;
}

// A line of at most width columns: wrapped at spaces with a hanging indent.
void FitLine(absl::string_view line, size_t width, std::string* out) {
  if (DisplayWidth(line) <= width) {
    out->append(line.data(), line.size());
    return;
  }
  size_t indent = 0;
  while (indent < line.size() && line[indent] == ' ') ++indent;
  indent = std::min(indent, width / 2);
  const size_t hanging = std::min(indent + 4, width / 2);
  std::string current(indent, ' ');
  size_t current_cols = indent;
  bool empty = true;  // nothing but the indent on the current line
  size_t i = indent;
  while (i < line.size()) {
    size_t spaces = 0;
    while (i + spaces < line.size() && line[i + spaces] == ' ') ++spaces;
    size_t end = i + spaces;
    while (end < line.size() && line[end] != ' ') ++end;
    const absl::string_view word = line.substr(i + spaces, end - i - spaces);
    i = end;
    if (word.empty()) break;  // trailing spaces
    const size_t cols = DisplayWidth(word);
    if (!empty && current_cols + spaces + cols <= width) {
      current.append(spaces, ' ');
      current.append(word.data(), word.size());
      current_cols += spaces + cols;
      continue;
    }
    if (!empty) {
      absl::StrAppend(out, current, "\n");
      current.assign(hanging, ' ');
      current_cols = hanging;
    }
    const std::string fitted = ElideMiddle(word, width - current_cols);
    current += fitted;
    current_cols += DisplayWidth(fitted);
    empty = false;
  }
  out->append(current);
}

}  // namespace

size_t DisplayWidth(absl::string_view s) {
  size_t cols = 0;
  for (size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80 && s[i] != '\x1b') {  // the common case
      ++cols;
      ++i;
      continue;
    }
    const Unit u = NextUnit(s, i);
    cols += u.cols;
    i += u.len;
  }
  return cols;
}

namespace {

// s in at most max_cols columns: its start and its end around "...", the start getting
// head_num / head_den of the room (rounded up), the end the rest.
std::string ElideAround(absl::string_view s, size_t max_cols, size_t head_num, size_t head_den) {
  if (DisplayWidth(s) <= max_cols) return std::string(s);
  const size_t dots = sizeof(kEllipsis) - 1;
  if (max_cols <= dots) return std::string(kEllipsis, max_cols);
  const std::vector<Unit> units = Units(s);
  const size_t room = max_cols - dots;
  const size_t head_room = (room * head_num + head_den - 1) / head_den;
  const size_t tail_room = room - head_room;
  size_t head_end = 0, head_cols = 0;  // units [0, head_end)
  while (head_end < units.size() &&
         (units[head_end].escape || head_cols + units[head_end].cols <= head_room)) {
    head_cols += units[head_end].cols;
    ++head_end;
  }
  size_t tail_begin = units.size(), tail_cols = 0;  // units [tail_begin, size)
  while (tail_begin > head_end &&
         (units[tail_begin - 1].escape ||
          tail_cols + units[tail_begin - 1].cols <= tail_room + (head_room - head_cols))) {
    tail_cols += units[tail_begin - 1].cols;
    --tail_begin;
  }
  std::string out(s.substr(0, head_end < units.size() ? units[head_end].pos : s.size()));
  out += kEllipsis;
  if (tail_begin < units.size()) absl::StrAppend(&out, s.substr(units[tail_begin].pos));
  // A colour begun before the cut may have lost its reset with the middle.
  if (s.find('\x1b') != absl::string_view::npos) out += kReset;
  return out;
}

}  // namespace

std::string ElideMiddle(absl::string_view s, size_t max_cols) {
  return ElideAround(s, max_cols, 1, 2);
}

std::string ElideStart(absl::string_view s, size_t max_cols) {
  if (DisplayWidth(s) <= max_cols) return std::string(s);
  const size_t dots = sizeof(kEllipsis) - 1;
  if (max_cols <= dots) return std::string(kEllipsis, max_cols);
  const std::vector<Unit> units = Units(s);
  size_t tail_begin = units.size(), tail_cols = 0;
  while (tail_begin > 0 && (units[tail_begin - 1].escape ||
                            tail_cols + units[tail_begin - 1].cols <= max_cols - dots)) {
    tail_cols += units[tail_begin - 1].cols;
    --tail_begin;
  }
  std::string out(kEllipsis);
  if (tail_begin < units.size()) absl::StrAppend(&out, s.substr(units[tail_begin].pos));
  return out;
}

std::string ElideKeepingFileNames(absl::string_view s, size_t max_cols) {
  std::string out(s);
  const absl::string_view kDelimiters = " (),;\"'";
  while (DisplayWidth(out) > max_cols) {
    // The longest directory part of a token: from the token's start through its last '/'.
    size_t best_start = 0, best_len = 0;
    for (size_t start = 0; start < out.size();) {
      size_t end = out.find_first_of(kDelimiters.data(), start, kDelimiters.size());
      if (end == std::string::npos) end = out.size();
      const size_t slash = out.rfind('/', end == 0 ? 0 : end - 1);
      if (slash != std::string::npos && slash >= start && slash + 1 - start > best_len) {
        best_start = start;
        best_len = slash + 1 - start;
      }
      start = end + 1;
    }
    const size_t dots = sizeof(kEllipsis) - 1;
    if (best_len <= dots + 1) break;  // nothing left to shorten: ".../" or shorter
    const std::string dir = out.substr(best_start, best_len);
    const size_t excess = DisplayWidth(out) - max_cols;
    const size_t dir_cols = DisplayWidth(dir);
    // Keep the directory's end ("/") whole: elide its middle by what is too wide, or all of it.
    const std::string shorter = dir_cols > excess + dots + 1 ? ElideMiddle(dir, dir_cols - excess)
                                                             : absl::StrCat(kEllipsis, "/");
    if (shorter.size() >= dir.size()) break;
    out.replace(best_start, best_len, shorter);
  }
  // The end tells paths apart ("...before.report.json"): it gets two thirds.
  return ElideAround(out, max_cols, 1, 3);
}

std::string PadRight(absl::string_view s, size_t cols) {
  std::string out(s);
  const size_t have = DisplayWidth(s);
  if (have < cols) out.append(cols - have, ' ');
  return out;
}

std::string PadLeft(absl::string_view s, size_t cols) {
  const size_t have = DisplayWidth(s);
  std::string out(have < cols ? cols - have : 0, ' ');
  out.append(s.data(), s.size());
  return out;
}

std::string Cell(absl::string_view s, size_t cols) { return PadRight(ElideMiddle(s, cols), cols); }

std::string FitLines(absl::string_view text, size_t width) {
  std::string out;
  out.reserve(text.size() + 64);
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    FitLine(text.substr(0, nl), width, &out);
    if (nl == absl::string_view::npos) break;
    out += '\n';
    text.remove_prefix(nl + 1);
  }
  return out;
}

std::string StripEscapes(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t esc = EscapeLength(text, i);
    if (esc > 0) {
      i += esc;
      continue;
    }
    out += text[i++];
  }
  return out;
}

std::optional<ColorWhen> ParseColorWhen(absl::string_view value) {
  const std::string word = absl::AsciiStrToLower(absl::StripAsciiWhitespace(value));
  if (word == "auto") return ColorWhen::kAuto;
  if (word == "always") return ColorWhen::kAlways;
  if (word == "never") return ColorWhen::kNever;
  return std::nullopt;
}

bool UseColor(ColorWhen when, bool is_terminal, const EnvLookup& env) {
  if (when != ColorWhen::kAuto) return when == ColorWhen::kAlways;
  const auto set = [&](const char* name) {
    const char* v = env(name);
    return v != nullptr && v[0] != '\0';
  };
  if (set("NO_COLOR")) return false;
  if (set("CLICOLOR_FORCE") && absl::string_view(env("CLICOLOR_FORCE")) != "0") return true;
  const char* term = env("TERM");
  if (term != nullptr && absl::string_view(term) == "dumb") return false;
  return is_terminal;
}

bool UseColor(ColorWhen when, int fd) {
  return UseColor(when, when == ColorWhen::kAuto && IsTerminal(fd),
                  [](const char* name) -> const char* { return std::getenv(name); });
}

bool IsTerminal(int fd) { return ::isatty(fd) == 1; }

}  // namespace gpuidle::internal
