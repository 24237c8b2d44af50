// What every JSON writer of gpuidle writes values with (the report, the diff): valid UTF-8
// strings, numbers that JSON can hold, nulls for what is unknown.
#ifndef GPUIDLE_LIB_REPORT_JSON_OUTPUT_H_
#define GPUIDLE_LIB_REPORT_JSON_OUTPUT_H_

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "core/text_safety.h"
#include "rapidjson/prettywriter.h"
#include "rapidjson/stringbuffer.h"

namespace gpuidle::internal::json_output {

using Json = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

// JSON must be UTF-8, and names from traces or programs may not be (the readers replace and
// count what they read; this covers everything else).
inline void Str(Json& w, absl::string_view s) {
  if (!IsValidUtf8(s)) {
    const std::string valid = ToValidUtf8(s);
    w.String(valid.data(), static_cast<rapidjson::SizeType>(valid.size()));
    return;
  }
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

// JSON has no NaN or infinity (RapidJSON would leave the value out and break the document).
inline void Number(Json& w, double v) {
  if (std::isfinite(v)) {
    w.Double(v);
  } else {
    w.Null();
  }
}

inline void OptionalInt(Json& w, const std::optional<int>& v) {
  if (v) {
    w.Int(*v);
  } else {
    w.Null();
  }
}

inline void OptionalInt64(Json& w, const std::optional<int64_t>& v) {
  if (v) {
    w.Int64(*v);
  } else {
    w.Null();
  }
}

inline void OptionalNumber(Json& w, const std::optional<double>& v) {
  if (v) {
    Number(w, *v);
  } else {
    w.Null();
  }
}

}  // namespace gpuidle::internal::json_output

#endif  // GPUIDLE_LIB_REPORT_JSON_OUTPUT_H_
