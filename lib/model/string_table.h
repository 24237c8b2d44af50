// Interned strings: kernel, API and range names repeat millions of times in a trace, so the
// timeline stores each once and refers to it by a 32-bit id.
#ifndef GPUIDLE_LIB_MODEL_STRING_TABLE_H_
#define GPUIDLE_LIB_MODEL_STRING_TABLE_H_

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"

namespace gpuidle::internal {

using StringId = uint32_t;

class StringTable {
 public:
  StringTable();
  StringTable(StringTable&&) = default;
  StringTable& operator=(StringTable&&) = default;
  StringTable(const StringTable&) = delete;
  StringTable& operator=(const StringTable&) = delete;

  // Id 0 is always the empty string.
  static constexpr StringId kEmpty = 0;

  StringId Intern(absl::string_view s);
  // A table with the same strings under the same ids.
  StringTable Copy() const;
  absl::string_view Get(StringId id) const { return views_[id]; }
  size_t size() const { return views_.size(); }

 private:
  std::deque<std::string> storage_;  // stable addresses for the views below
  std::vector<absl::string_view> views_;
  absl::flat_hash_map<absl::string_view, StringId> ids_;
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_MODEL_STRING_TABLE_H_
