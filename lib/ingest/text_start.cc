#include "ingest/text_start.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/status_macros.h"

namespace gpuidle::internal::kineto {

absl::Status DrainCompressed(ByteSource& source) {
  if (!source.compressed()) return absl::OkStatus();
  std::vector<char> buffer(1 << 16);
  for (;;) {
    absl::StatusOr<size_t> got = source.Read(buffer.data(), buffer.size());
    if (!got.ok()) return got.status();
    if (*got == 0) return absl::OkStatus();
  }
}

absl::StatusOr<size_t> PrefixedSource::Read(char* buffer, size_t n) {
  if (pos_ < prefix_.size()) {
    const size_t k = std::min(n, prefix_.size() - pos_);
    std::memcpy(buffer, prefix_.data() + pos_, k);
    pos_ += k;
    return k;
  }
  return inner_.Read(buffer, n);
}

absl::StatusOr<TextStart> ReadTextStart(ByteSource& source) {
  TextStart start;
  while (start.size < start.bytes.size()) {
    GPUIDLE_ASSIGN_OR_RETURN(const size_t got,
                             source.Read(reinterpret_cast<char*>(start.bytes.data()) + start.size,
                                         start.bytes.size() - start.size));
    if (got == 0) break;
    start.size += got;
  }
  return start;
}

std::string NotUtf8Json(const TextStart& s) {
  const auto unicode = [](absl::string_view what) {
    return absl::StrCat("the text is ", what,
                        "; gpuidle reads JSON in UTF-8: convert it first (iconv -f ", what,
                        " -t UTF-8)");
  };
  const auto ascii = [](int c) { return c > 0 && c < 0x80; };
  if ((s.at(0) == 0 && s.at(1) == 0 && s.at(2) == 0xfe && s.at(3) == 0xff) ||
      (s.at(0) == 0xff && s.at(1) == 0xfe && s.at(2) == 0 && s.at(3) == 0) ||
      (ascii(s.at(0)) && s.at(1) == 0 && s.at(2) == 0 && s.at(3) == 0) ||
      (s.at(0) == 0 && s.at(1) == 0 && s.at(2) == 0 && ascii(s.at(3)))) {
    return unicode("UTF-32");
  }
  if ((s.at(0) == 0xfe && s.at(1) == 0xff) || (s.at(0) == 0xff && s.at(1) == 0xfe) ||
      (ascii(s.at(0)) && s.at(1) == 0) || (s.at(0) == 0 && ascii(s.at(1)))) {
    return unicode("UTF-16");
  }
  if (s.at(0) == 0) return "the text starts with NUL bytes: it is not JSON";
  return "";
}

}  // namespace gpuidle::internal::kineto
