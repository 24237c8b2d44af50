#include "report/json_fields.h"

#include "absl/strings/str_cat.h"
#include "core/version.h"
#include "model/report_names.h"

namespace gpuidle::internal::json_fields {

using json_output::Str;

std::string Document(absl::string_view schema, absl::FunctionRef<void(Json&)> members) {
  rapidjson::StringBuffer buffer;
  Json w(buffer);
  w.SetIndent(' ', 1);
  w.StartObject();
  StringField(w, report_keys::kSchema, schema);
  StringField(w, report_keys::kGenerator, absl::StrCat("gpuidle ", kVersion));
  members(w);
  w.EndObject();
  std::string out(buffer.GetString(), buffer.GetSize());
  out.push_back('\n');
  return out;
}

void Int64Field(Json& w, absl::string_view key, int64_t value) {
  Str(w, key);
  w.Int64(value);
}

void Uint64Field(Json& w, absl::string_view key, uint64_t value) {
  Str(w, key);
  w.Uint64(value);
}

void StringField(Json& w, absl::string_view key, absl::string_view value) {
  Str(w, key);
  Str(w, value);
}

void BoolField(Json& w, absl::string_view key, bool value) {
  Str(w, key);
  w.Bool(value);
}

void NumberField(Json& w, absl::string_view key, double value) {
  Str(w, key);
  json_output::Number(w, value);
}

void OptionalIntField(Json& w, absl::string_view key, const std::optional<int>& value) {
  Str(w, key);
  json_output::OptionalInt(w, value);
}

void OptionalInt64Field(Json& w, absl::string_view key, const std::optional<int64_t>& value) {
  Str(w, key);
  json_output::OptionalInt64(w, value);
}

void OptionalNumberField(Json& w, absl::string_view key, const std::optional<double>& value) {
  Str(w, key);
  json_output::OptionalNumber(w, value);
}

void StringsField(Json& w, absl::string_view key, const std::vector<std::string>& values) {
  Str(w, key);
  w.StartArray();
  for (const std::string& v : values) Str(w, v);
  w.EndArray();
}

void IntsField(Json& w, absl::string_view key, const std::vector<int>& values) {
  Str(w, key);
  w.StartArray();
  for (int v : values) w.Int(v);
  w.EndArray();
}

void OptionalSubcauseField(Json& w, absl::string_view key, const std::optional<Subcause>& value) {
  Str(w, key);
  if (value) {
    Str(w, QualifiedSubcauseName(*value));
  } else {
    w.Null();
  }
}

void CauseFields(Json& w, Subcause subcause) {
  StringField(w, report_keys::kCause, CauseName(CauseOf(subcause)));
  StringField(w, report_keys::kSubcause, QualifiedSubcauseName(subcause));
}

void DeviceFields(Json& w, const std::optional<int>& rank, int device) {
  OptionalIntField(w, report_keys::kRank, rank);
  Int64Field(w, report_keys::kDevice, device);
}

}  // namespace gpuidle::internal::json_fields
