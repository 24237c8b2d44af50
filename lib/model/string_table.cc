#include "model/string_table.h"

namespace gpuidle::internal {

StringTable::StringTable() { Intern(""); }

StringId StringTable::Intern(absl::string_view s) {
  if (auto it = ids_.find(s); it != ids_.end()) return it->second;
  const std::string& stored = storage_.emplace_back(s);
  const auto id = static_cast<StringId>(views_.size());
  views_.push_back(stored);
  ids_.emplace(stored, id);
  return id;
}

StringTable StringTable::Copy() const {
  StringTable copy;
  for (size_t id = 1; id < views_.size(); ++id) copy.Intern(views_[id]);  // 0 is kEmpty
  return copy;
}

}  // namespace gpuidle::internal
