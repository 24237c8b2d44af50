#include "settings/environment.h"

#include <optional>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "core/text_safety.h"

namespace gpuidle::internal {

DisableSetting ReadDisableVariable(const char* value) {
  DisableSetting setting;
  if (value == nullptr || absl::StripAsciiWhitespace(value).empty()) return setting;
  const std::optional<bool> on = ParseSwitchWord(value);
  setting.disabled = on.value_or(true);
  if (!on) {
    setting.warning = absl::StrCat("GPUIDLE_DISABLE=", ForMessage(value), ": ", kSwitchWords,
                                   "; gpuidle is off, the program runs as usual");
  }
  return setting;
}

absl::Status ApplyProfilerVariable(absl::string_view name, absl::string_view value,
                                   ProfilerOptions* options) {
  const SettingSpec* spec = FindSettingByVariable(name);
  if (spec == nullptr)
    return absl::InvalidArgumentError(absl::StrCat("unknown variable ", ForMessage(name)));
  return spec->apply(value, options);
}

absl::StatusOr<ProfilerOptions> ProfilerOptionsFromVariables(
    const std::function<const char*(const char*)>& lookup, const DescribeBadValue& describe) {
  ProfilerOptions options;
  for (const char* name : kProfilerVariables) {
    const char* value = lookup(name);
    if (value == nullptr || value[0] == '\0') continue;
    if (absl::Status s = ApplyProfilerVariable(name, value, &options); !s.ok()) {
      return absl::InvalidArgumentError(
          describe ? describe(name, value, s.message())
                   : absl::StrCat(name, "=", ForMessage(value), ": ", s.message()));
    }
  }
  return options;
}

}  // namespace gpuidle::internal
