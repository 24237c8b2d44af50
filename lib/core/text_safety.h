// Text from traces and users as it may leave gpuidle: valid UTF-8 for JSON, escaped control
// characters for terminals, short quotes in error messages. Every output path goes through here.
//
//   size_t replaced = 0;
//   std::string name = ToValidUtf8(raw, &replaced);   // invalid bytes -> U+FFFD, counted
//   std::cerr << Printable(name);                     // "\x1b[2J" stays visible, harmless
//   return InvalidArgument(StrCat("bad value ", QuoteForMessage(v)));  // "abc..." (100000 bytes)
#ifndef GPUIDLE_LIB_CORE_TEXT_SAFETY_H_
#define GPUIDLE_LIB_CORE_TEXT_SAFETY_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace gpuidle::internal {

// Length of the well-formed UTF-8 sequence at s[i] (1 to 4; no overlong form, no surrogate,
// nothing past U+10FFFF), with its code point in *cp; 0 if s[i] does not start one.
size_t Utf8SequenceLength(absl::string_view s, size_t i, uint32_t* cp);

bool IsValidUtf8(absl::string_view s);

// s with every byte that is not part of a well-formed UTF-8 sequence replaced by U+FFFD; adds
// the number of bytes replaced to *replaced when given.
std::string ToValidUtf8(absl::string_view s, size_t* replaced = nullptr);

// s as it may reach a terminal: control characters (C0, DEL, C1), bidirectional controls and
// bytes that are not UTF-8 are written as \x1b or \u009b; everything else, UTF-8 included,
// stays.
std::string Printable(absl::string_view s);

// At most max_bytes bytes of s, "..." at the end when cut; never inside a UTF-8 sequence.
std::string Shorten(absl::string_view s, size_t max_bytes);

// A value echoed in an error message: Printable, and at most about max_bytes long
// ("aaaa... (100000 bytes)") so that a huge value never floods a log. QuoteForMessage puts it
// in double quotes ("\"aaaa...\" (100000 bytes)").
std::string ForMessage(absl::string_view value, size_t max_bytes = 80);
std::string QuoteForMessage(absl::string_view value, size_t max_bytes = 80);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_CORE_TEXT_SAFETY_H_
