#include "core/text_safety.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gpuidle::internal {
namespace {

constexpr char kReplacement[] = "\xef\xbf\xbd";  // U+FFFD

// Bidirectional-text controls reorder what the terminal shows; the line and paragraph
// separators (U+2028, U+2029) break lines in some terminals and editors (issue 29).
bool IsLayoutControl(uint32_t cp) {
  return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e ||
         cp == 0x200f || cp == 0x061c || cp == 0x2028 || cp == 0x2029;
}

}  // namespace

size_t Utf8SequenceLength(absl::string_view s, size_t i, uint32_t* cp) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  const size_t len = c >= 0xc2 && c <= 0xdf   ? 2
                     : c >= 0xe0 && c <= 0xef ? 3
                     : c >= 0xf0 && c <= 0xf4 ? 4
                                              : 0;
  if (len == 0 || i + len > s.size()) return 0;
  uint32_t v = len == 2 ? (c & 0x1f) : len == 3 ? (c & 0x0f) : (c & 0x07);
  for (size_t k = 1; k < len; ++k) {
    const auto cont = static_cast<unsigned char>(s[i + k]);
    if ((cont & 0xc0) != 0x80) return 0;
    v = (v << 6) | (cont & 0x3f);
  }
  if (len == 3 && (v < 0x800 || (v >= 0xd800 && v <= 0xdfff))) return 0;
  if (len == 4 && (v < 0x10000 || v > 0x10ffff)) return 0;
  *cp = v;
  return len;
}

bool IsValidUtf8(absl::string_view s) {
  uint32_t cp = 0;
  for (size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t len = Utf8SequenceLength(s, i, &cp);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

std::string ToValidUtf8(absl::string_view s, size_t* replaced) {
  if (IsValidUtf8(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  uint32_t cp = 0;
  for (size_t i = 0; i < s.size();) {
    const size_t len = Utf8SequenceLength(s, i, &cp);
    if (len == 0) {
      out.append(kReplacement);
      if (replaced != nullptr) ++*replaced;
      ++i;
      continue;
    }
    out.append(s.data() + i, len);
    i += len;
  }
  return out;
}

std::string Printable(absl::string_view s) {
  std::string out;
  out.reserve(s.size());
  uint32_t cp = 0;
  for (size_t i = 0; i < s.size();) {
    const size_t len = Utf8SequenceLength(s, i, &cp);
    if (len == 0) {
      absl::StrAppendFormat(&out, "\\x%02x", static_cast<unsigned char>(s[i]));
      ++i;
      continue;
    }
    if (len == 1 && (cp < 0x20 || cp == 0x7f)) {
      absl::StrAppendFormat(&out, "\\x%02x", cp);
    } else if (len > 1 && (cp <= 0x9f || IsLayoutControl(cp))) {
      absl::StrAppendFormat(&out, "\\u%04x", cp);
    } else {
      out.append(s.data() + i, len);
    }
    i += len;
  }
  return out;
}

std::string Shorten(absl::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  if (max_bytes < 3) return std::string("...").substr(0, max_bytes);
  size_t cut = max_bytes - 3;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xc0) == 0x80) --cut;
  return absl::StrCat(s.substr(0, cut), "...");
}

std::string ForMessage(absl::string_view value, size_t max_bytes) {
  if (value.size() <= max_bytes) return Printable(value);
  return absl::StrCat(Printable(Shorten(value, max_bytes)), " (", value.size(), " bytes)");
}

std::string QuoteForMessage(absl::string_view value, size_t max_bytes) {
  if (value.size() <= max_bytes) return absl::StrCat("\"", Printable(value), "\"");
  return absl::StrCat("\"", Printable(Shorten(value, max_bytes)), "\" (", value.size(), " bytes)");
}

}  // namespace gpuidle::internal
