// Text as a terminal shows it: display columns of UTF-8 (a CJK character takes two, a combining
// accent none, gpuidle's own colour codes none), lines fitted to a width, and the one decision
// whether a stream gets colour (README, "The summary fits 100 columns").
//
//   size_t cols = DisplayWidth("GPU 0  \xe6\x95\xb0");            // 9
//   std::string name = ElideMiddle(kernel, 40);                    // "void at::na...float>"
//   std::string text = FitLines(summary, 100);                     // no line over 100 columns
//   bool color = UseColor(ColorWhen::kAuto, STDOUT_FILENO);        // tty, NO_COLOR, CLICOLOR_FORCE
#ifndef GPUIDLE_LIB_CORE_TERMINAL_H_
#define GPUIDLE_LIB_CORE_TERMINAL_H_

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace gpuidle::internal {

// The columns s takes on a terminal: code points by their East Asian width (wide and fullwidth
// ones two, combining marks and zero-width ones none), ANSI escape sequences (ESC [ ... final
// byte) none, any other byte one.
size_t DisplayWidth(absl::string_view s);

// s in at most max_cols columns: unchanged if it fits, else its start and its end around "..."
// (so that a file:line or a kernel's template arguments stay readable). Never cuts a UTF-8
// sequence or an escape sequence; a cut colour span is closed with a reset.
std::string ElideMiddle(absl::string_view s, size_t max_cols);

// s in at most max_cols columns: unchanged if it fits, else "..." and its end (where the end tells
// items apart: "...Step#12"). Never cuts a UTF-8 or escape sequence.
std::string ElideStart(absl::string_view s, size_t max_cols);

// s in at most max_cols columns, the directories of the paths in it shortened first ("/a/b/c/
// train.py:42 in step" -> "/a/...c/train.py:42 in step", the longest directory first, down to
// ".../"), so that file names, line numbers and the words around them survive; where that is
// not enough, its middle, the end (which tells paths apart) keeping two thirds of the room.
std::string ElideKeepingFileNames(absl::string_view s, size_t max_cols);

// s padded with spaces to cols columns (left-aligned, or right-aligned by PadLeft); s as it is
// if it is as wide already.
std::string PadRight(absl::string_view s, size_t cols);
std::string PadLeft(absl::string_view s, size_t cols);
// A table cell: s elided in the middle to cols columns, then padded to them.
std::string Cell(absl::string_view s, size_t cols);

// Every line of text in at most width columns: a longer line is wrapped at spaces, its
// continuation lines indented four more than it; a word wider than a line is elided in the
// middle. Lines that fit are left as they are.
std::string FitLines(absl::string_view text, size_t width);

// text without its ANSI escape sequences.
std::string StripEscapes(absl::string_view text);

// When the text summary is coloured: --color=auto|always|never, GPUIDLE_COLOR.
enum class ColorWhen { kAuto, kAlways, kNever };
// "auto", "always", "never" (any case, trimmed); nullopt for anything else.
std::optional<ColorWhen> ParseColorWhen(absl::string_view value);

// Reads an environment variable (nullptr if unset); ::getenv by default, a map in tests.
using EnvLookup = std::function<const char*(const char*)>;

// The decision, in one place for every front end: always and never are obeyed; auto colours a
// terminal unless NO_COLOR is set and non-empty (https://no-color.org) or TERM is "dumb", and
// colours anything when CLICOLOR_FORCE is set and not "0" (NO_COLOR wins over it).
bool UseColor(ColorWhen when, bool is_terminal, const EnvLookup& env);
// The same for a file descriptor (isatty) and the process environment.
bool UseColor(ColorWhen when, int fd);

// Whether fd is a terminal.
bool IsTerminal(int fd);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_CORE_TERMINAL_H_
