// The public settings API (gpuidle/settings.h): the option table and the environment rules
// (settings/option_table.h, settings/environment.h) as value types for applications and bindings.
#include "gpuidle/settings.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/text_safety.h"
#include "settings/environment.h"
#include "settings/option_table.h"

namespace gpuidle {

std::vector<SettingInfo> Settings() {
  std::vector<SettingInfo> settings;
  for (const internal::SettingSpec& s : internal::kSettingTable) {
    SettingInfo info;
    info.variable = s.variable;
    info.flag = s.flag != nullptr ? s.flag : "";
    info.flag_value = s.flag_value != nullptr ? s.flag_value : "";
    info.flag_sets = s.flag_sets != nullptr ? s.flag_sets : "";
    info.keyword = s.keyword != nullptr ? s.keyword : "";
    info.type = s.type;
    info.type_name = std::string(internal::SettingTypeName(s.type));
    info.default_value = s.default_value;
    info.unset_means = s.unset_means;
    info.range = s.range;
    info.help = s.help;
    info.front_ends = s.front_ends;
    settings.push_back(std::move(info));
  }
  return settings;
}

absl::Status ApplySetting(absl::string_view name, absl::string_view value,
                          ProfilerOptions* options) {
  const internal::SettingSpec* spec = absl::StartsWith(name, "-")
                                          ? internal::FindSettingByFlag(name)
                                          : internal::FindSettingByVariable(name);
  if (spec == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("unknown setting ", internal::ForMessage(name)));
  }
  return spec->apply(value, options);
}

absl::StatusOr<ProfilerOptions> ProfilerOptionsFromEnvironment() {
  return internal::ProfilerOptionsFromVariables(
      [](const char* name) -> const char* { return std::getenv(name); });
}

}  // namespace gpuidle
