// The Kineto reader's scanners over the current chunk of a ChunkedJsonStream: they find the end
// of a string, a plain number or a run of white space many bytes at a time (SSE2 where there
// is), so that RapidJSON's per-character code runs only for the unusual (kineto_reader.cc).
#ifndef GPUIDLE_LIB_INGEST_JSON_SCANNERS_H_
#define GPUIDLE_LIB_INGEST_JSON_SCANNERS_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/string_view.h"
#include "ingest/json_stream.h"
#include "ingest/kineto_reader.h"
#include "ingest/trace_numbers.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace gpuidle::internal::kineto {

inline bool IsJsonSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// The first '"', '\\' or control character (< 0x20) in [p, end), or end.
inline const char* FindStringSpecial(const char* p, const char* end) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i control_max = _mm_set1_epi8(0x1f);
  for (; end - p >= 16; p += 16) {
    const __m128i s = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i control = _mm_cmpeq_epi8(_mm_max_epu8(s, control_max), control_max);
    const __m128i hit =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(s, quote), _mm_cmpeq_epi8(s, backslash)), control);
    const int mask = _mm_movemask_epi8(hit);
    if (mask != 0) return p + __builtin_ctz(static_cast<unsigned>(mask));
  }
#endif
  for (; p != end; ++p) {
    const unsigned char c = static_cast<unsigned char>(*p);
    if (c == '"' || c == '\\' || c < 0x20) return p;
  }
  return end;
}

// The end of a number of the form -?(0|[1-9][0-9]*)(.[0-9]+)? that starts at p, when the
// character after it is before end too (so the number cannot go on in the next chunk);
// nullptr for anything else. RapidJSON reads such a number without error (an integer part
// of 300 digits or fewer is not "too big") and stops where this stops.
inline const char* ScanPlainNumber(const char* p, const char* end) {
  if (p != end && *p == '-') ++p;
  if (p == end) return nullptr;
  if (*p == '0') {
    ++p;
  } else if (*p >= '1' && *p <= '9') {
    const char* first = p;
    while (p != end && IsDigit(*p)) ++p;
    if (p - first > 300) return nullptr;
  } else {
    return nullptr;
  }
  if (p != end && *p == '.') {
    ++p;
    if (p == end || !IsDigit(*p)) return nullptr;
    while (p != end && IsDigit(*p)) ++p;
  }
  if (p == end || *p == 'e' || *p == 'E') return nullptr;
  return p;
}

inline const char* FindNonSpace(const char* p, const char* end) {
  while (p != end && IsJsonSpace(*p)) ++p;
  return p;
}

// Consumes the white space at the cursor, across chunks.
void SkipWhitespaceRun(ChunkedJsonStream& is);

// True if every byte of s is ASCII (the common case: no UTF-8 check needed), eight at a time.
inline bool IsAscii(absl::string_view s) {
  const char* p = s.data();
  const char* end = p + s.size();
  uint64_t high = 0;
  for (; end - p >= 8; p += 8) {
    uint64_t word;
    std::memcpy(&word, p, sizeof(word));
    high |= word;
  }
  for (; p != end; ++p) high |= static_cast<unsigned char>(*p);
  return (high & 0x8080808080808080ull) == 0;
}

// Where RapidJSON's own string parser writes a string that the fast scanner cannot hand over
// where it lies (it has an escape, or runs past the chunk): at most kMaxKeptStringBytes + 1
// bytes are stored, so that a string of any length costs bounded memory, and the handler still
// sees that it was longer than what it may keep. The rest is parsed (escapes checked) unstored.
class BoundedStringBuffer {
 public:
  using Ch = char;  // RapidJSON's output stream concept

  BoundedStringBuffer() { text_.reserve(256); }

  void Clear() {
    text_.clear();
    puts_ = 0;
  }
  void Put(char c) {
    if (puts_++ < kCapacity) text_.push_back(c);
  }
  // The string, without the '\0' that RapidJSON puts after it.
  absl::string_view text() const {
    const size_t length = puts_ == 0 ? 0 : puts_ - 1;
    return absl::string_view(text_).substr(0, std::min(length, text_.size()));
  }

 private:
  static constexpr size_t kCapacity = kMaxKeptStringBytes + 1;
  std::string text_;
  size_t puts_ = 0;
};

}  // namespace gpuidle::internal::kineto

#endif  // GPUIDLE_LIB_INGEST_JSON_SCANNERS_H_
