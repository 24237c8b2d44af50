// What the JSON report and the diff of two reports write alike: the document around their
// members, members of one value each, and the small objects of the report that the diff writes
// again (cause and subcause, a device's rank and ordinal). One implementation, so that the two
// documents cannot drift apart where they say the same thing.
#ifndef GPUIDLE_LIB_REPORT_JSON_FIELDS_H_
#define GPUIDLE_LIB_REPORT_JSON_FIELDS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "gpuidle/report.h"
#include "report/json_output.h"

namespace gpuidle::internal::json_fields {

using json_output::Json;

// The document: an object whose first members are "schema" and "generator" (this gpuidle), then
// what `members` writes; indented by one space and ended by one newline.
std::string Document(absl::string_view schema, absl::FunctionRef<void(Json&)> members);

// One member `key` each; the values as json_output writes them (null for a missing optional or a
// number JSON cannot hold).
void Int64Field(Json& w, absl::string_view key, int64_t value);
void Uint64Field(Json& w, absl::string_view key, uint64_t value);
void StringField(Json& w, absl::string_view key, absl::string_view value);
void BoolField(Json& w, absl::string_view key, bool value);
void NumberField(Json& w, absl::string_view key, double value);
void OptionalIntField(Json& w, absl::string_view key, const std::optional<int>& value);
void OptionalInt64Field(Json& w, absl::string_view key, const std::optional<int64_t>& value);
void OptionalNumberField(Json& w, absl::string_view key, const std::optional<double>& value);
void StringsField(Json& w, absl::string_view key, const std::vector<std::string>& values);
void IntsField(Json& w, absl::string_view key, const std::vector<int>& values);
// The qualified subcause ("sync_bound.host_sync"), or null.
void OptionalSubcauseField(Json& w, absl::string_view key, const std::optional<Subcause>& value);

// "cause" and "subcause" (qualified) of a subcause.
void CauseFields(Json& w, Subcause subcause);
// "rank" (null when unknown) and "device": which device of which process.
void DeviceFields(Json& w, const std::optional<int>& rank, int device);

}  // namespace gpuidle::internal::json_fields

#endif  // GPUIDLE_LIB_REPORT_JSON_FIELDS_H_
