#include "ingest/report_reader.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "core/text_safety.h"
#include "ingest/byte_source.h"
#include "rapidjson/document.h"
#include "rapidjson/error/en.h"
#include "rapidjson/memorystream.h"
#include "rapidjson/reader.h"

namespace gpuidle::internal {
namespace {

using Value = rapidjson::Value;

// Where a value is in the report ("devices[1].collective_timings.kind[7]"), built on the stack as
// the reader descends and spelt out only for an error. The root has no parent.
struct Path {
  const Path* parent = nullptr;
  absl::string_view key;  // a member; empty for an index
  size_t index = 0;
};

std::string PathString(const Path* p) {
  if (p == nullptr || p->parent == nullptr) return "";  // the root
  std::string s = PathString(p->parent);
  if (p->key.empty()) {
    absl::StrAppend(&s, "[", p->index, "]");
  } else {
    absl::StrAppend(&s, s.empty() ? "" : ".", p->key);
  }
  return s;
}

// RapidJSON's document, filled through this: nesting, values and strings are bounded before they
// cost memory (the limits of report_reader.h).
class LimitedHandler {
 public:
  explicit LimitedHandler(rapidjson::Document& d) : d_(d) {}

  bool Null() { return Count() && d_.Null(); }
  bool Bool(bool b) { return Count() && d_.Bool(b); }
  bool Int(int i) { return Count() && d_.Int(i); }
  bool Uint(unsigned u) { return Count() && d_.Uint(u); }
  bool Int64(int64_t i) { return Count() && d_.Int64(i); }
  bool Uint64(uint64_t u) { return Count() && d_.Uint64(u); }
  bool Double(double v) { return Count() && d_.Double(v); }
  // Numbers arrive as text (kParseNumbersAsStringsFlag): integers typed as RapidJSON types them,
  // others through absl::SimpleAtod (exact, and not RapidJSON's full-precision path, which has
  // undefined behaviour on some inputs). A number beyond a double's range ends the parse.
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
    if (!Count()) return false;
    const absl::string_view text(s, n);
    if (text.find_first_of(".eE") == absl::string_view::npos) {
      int64_t i = 0;
      uint64_t u = 0;
      if (absl::SimpleAtoi(text, &i)) return d_.Int64(i);
      if (absl::SimpleAtoi(text, &u)) return d_.Uint64(u);
    }
    double v = 0;
    return absl::SimpleAtod(text, &v) && std::isfinite(v) && d_.Double(v);
  }
  bool String(const char* s, rapidjson::SizeType n, bool copy) {
    return Count() && Short(n) && d_.String(s, n, copy);
  }
  bool Key(const char* s, rapidjson::SizeType n, bool copy) {
    return Count() && Short(n) && Once(absl::string_view(s, n)) && d_.Key(s, n, copy);
  }
  bool StartObject() {
    if (!Count() || !Deeper()) return false;
    keys_.emplace_back();
    return d_.StartObject();
  }
  bool EndObject(rapidjson::SizeType n) {
    --depth_;
    if (!keys_.empty()) keys_.pop_back();
    return d_.EndObject(n);
  }
  bool StartArray() { return Count() && Deeper() && d_.StartArray(); }
  bool EndArray(rapidjson::SizeType n) {
    --depth_;
    return d_.EndArray(n);
  }

  // Why the handler stopped the parse; "" if it did not.
  const std::string& limit() const { return limit_; }
  // A key twice in one object (issue 29: gpuidle kept the first, Python's json and jsonschema
  // the last, so a validated document was not the one gpuidle read); "" if none.
  const std::string& duplicate() const { return duplicate_; }

 private:
  bool Count() {
    if (++values_ <= kMaxReportValues) return true;
    limit_ = absl::StrCat("more than ", kMaxReportValues, " JSON values");
    return false;
  }
  bool Short(rapidjson::SizeType n) {
    if (n <= kMaxReportStringBytes) return true;
    limit_ = absl::StrCat("a string longer than ", kMaxReportStringBytes, " bytes");
    return false;
  }
  bool Once(absl::string_view key) {
    if (keys_.empty() || keys_.back().insert(std::string(key)).second) return true;
    duplicate_ = absl::StrCat("the key \"", absl::CHexEscape(key.substr(0, 64)),
                              "\" appears twice in one object");
    return false;
  }
  bool Deeper() {
    if (++depth_ <= kMaxJsonDepth) return true;
    limit_ = absl::StrCat("nested deeper than ", kMaxJsonDepth, " levels");
    return false;
  }

  rapidjson::Document& d_;
  size_t values_ = 0;
  int depth_ = 0;
  std::string limit_;
  std::string duplicate_;
  std::vector<absl::flat_hash_set<std::string>> keys_;  // of each open object
};

std::optional<OneOffKind> ParseOneOffKind(absl::string_view name) {
  for (int k = 0; k < kNumOneOffKinds; ++k) {
    if (OneOffKindName(static_cast<OneOffKind>(k)) == name) return static_cast<OneOffKind>(k);
  }
  return std::nullopt;
}

enum class Need { kRequired, kOptional };

// Reads one report out of its parsed JSON, checking every value it takes.
class ReportParser {
 public:
  explicit ReportParser(absl::string_view name) : name_(name) {}

  absl::Status Error(const Path& at, absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(name_, ": ", PathString(&at), ": ", what));
  }

  absl::StatusOr<Report> Parse(const Value& doc) const {
    if (!doc.IsObject()) {
      return absl::InvalidArgumentError(
          absl::StrCat(name_, ": not a gpuidle report (not a JSON object)"));
    }
    Report r;
    const Path root;
    std::string schema;
    GPUIDLE_RETURN_IF_ERROR(String(doc, root, "schema", &schema));
    if (!absl::StartsWith(schema, kReportSchemaPrefix)) {
      return absl::InvalidArgumentError(
          absl::StrCat(name_, ": not a gpuidle report (schema ", QuoteForMessage(schema), ")"));
    }
    if (schema != kReportSchema) {
      return absl::InvalidArgumentError(absl::StrCat(name_, ": schema ", QuoteForMessage(schema),
                                                     ": this gpuidle reads ", kReportSchema,
                                                     " reports (analyse the trace again)"));
    }
    GPUIDLE_RETURN_IF_ERROR(String(doc, root, "source", &r.source));
    GPUIDLE_RETURN_IF_ERROR(Strings(doc, root, "inputs", &r.inputs));
    GPUIDLE_ASSIGN_OR_RETURN(const Value* window, Object(doc, root, "window"));
    const Path at_window{&root, "window"};
    GPUIDLE_RETURN_IF_ERROR(Time(*window, at_window, "start_ns", &r.window_start_ns));
    GPUIDLE_RETURN_IF_ERROR(Time(*window, at_window, "end_ns", &r.window_end_ns));
    GPUIDLE_RETURN_IF_ERROR(
        InOrder(at_window, "start_ns", r.window_start_ns, "end_ns", r.window_end_ns));

    GPUIDLE_ASSIGN_OR_RETURN(const Value* completeness, Object(doc, root, "completeness"));
    const Path at_completeness{&root, "completeness"};
    GPUIDLE_ASSIGN_OR_RETURN(const Value* dropped,
                             Get(*completeness, at_completeness, "dropped_records"));
    if (!dropped->IsNull()) {
      if (!dropped->IsUint64()) {
        return Error({&at_completeness, "dropped_records"}, "not a count (nor null)");
      }
      r.dropped_records = dropped->GetUint64();
    }
    GPUIDLE_RETURN_IF_ERROR(Uint64(*completeness, at_completeness, "zero_timestamp_records",
                                   &r.zero_timestamp_records));
    GPUIDLE_RETURN_IF_ERROR(
        Bool(*completeness, at_completeness, "record_limit_reached", &r.record_limit_reached));

    GPUIDLE_ASSIGN_OR_RETURN(const Value* coverage, Object(doc, root, "coverage", Need::kOptional));
    if (coverage != nullptr) {
      const Path at{&root, "coverage"};
      Coverage& c = r.coverage.emplace();
      GPUIDLE_RETURN_IF_ERROR(Count(*coverage, at, "windows", &c.windows));
      GPUIDLE_RETURN_IF_ERROR(Duration(*coverage, at, "traced_ns", &c.traced_ns));
      GPUIDLE_RETURN_IF_ERROR(Duration(*coverage, at, "span_ns", &c.span_ns));
      // What was seen and the plan (optional: reports before issue 28 lack them).
      for (const auto& [key, field] :
           {std::pair<const char*, int64_t*>{"traced_until_ns", &c.traced_until_ns},
            {"first_window_ns", &c.first_window_ns},
            {"window_ns", &c.window_ns},
            {"period_ns", &c.period_ns}}) {
        GPUIDLE_RETURN_IF_ERROR(Duration(*coverage, at, key, field, Need::kOptional));
      }
    }
    GPUIDLE_RETURN_IF_ERROR(Int(doc, root, "visible_device_count", &r.visible_device_count));
    if (r.visible_device_count < 0) return Error({&root, "visible_device_count"}, "negative");
    GPUIDLE_RETURN_IF_ERROR(Ints(doc, root, "unused_devices", &r.unused_devices));
    GPUIDLE_RETURN_IF_ERROR(VisibleDevices(doc, root, &r));
    GPUIDLE_RETURN_IF_ERROR(String(doc, root, "step_source", &r.step_source));
    // Optional: reports before it lack it.
    GPUIDLE_RETURN_IF_ERROR(String(doc, root, "tracer_time", &r.tracer_time, Need::kOptional));
    if (r.tracer_time != "taken_out" && r.tracer_time != "as_recorded" &&
        r.tracer_time != "not_known") {
      return Error({&root, "tracer_time"}, "not one of taken_out, as_recorded, not_known");
    }
    GPUIDLE_RETURN_IF_ERROR(Strings(doc, root, "warnings", &r.warnings));
    GPUIDLE_RETURN_IF_ERROR(Ranks(doc, root, &r));
    GPUIDLE_RETURN_IF_ERROR(
        OptionalInt(doc, root, "straggler_rank", &r.straggler_rank, Need::kOptional));
    GPUIDLE_RETURN_IF_ERROR(Ints(doc, root, "stragglers", &r.stragglers, Need::kOptional));
    GPUIDLE_RETURN_IF_ERROR(Clock(doc, root, &r.clock));

    GPUIDLE_ASSIGN_OR_RETURN(const Value* devices, Array(doc, root, "devices", kMaxReportDevices));
    const Path at_devices{&root, "devices"};
    r.devices.resize(devices->Size());
    // Every time of a device is within its window, so the windows' sum bounds every sum of
    // times over devices; the counts (steps, kernels, copies, collectives) add up on their own.
    int64_t windows_ns = 0, counts = 0;
    for (rapidjson::SizeType i = 0; i < devices->Size(); ++i) {
      const Path at_device{&at_devices, "", i};
      const DeviceReport& d = r.devices[i];
      GPUIDLE_RETURN_IF_ERROR(Device((*devices)[i], at_device, &r.devices[i]));
      GPUIDLE_RETURN_IF_ERROR(
          AddToSum({&at_device, "window_ns"}, d.window_ns, &windows_ns, "the devices' windows"));
      for (int64_t count : {d.step_count, d.kernel_count, d.memcpy_count, d.memset_count}) {
        GPUIDLE_RETURN_IF_ERROR(AddToSum(at_device, count, &counts, "the devices' counts"));
      }
      for (const CollectiveStats& k : d.collectives) {
        GPUIDLE_RETURN_IF_ERROR(AddToSum(at_device, k.count, &counts, "the devices' counts"));
      }
    }

    GPUIDLE_RETURN_IF_ERROR(
        Uint64(doc, root, "steps_not_listed", &r.steps_not_listed, Need::kOptional));
    GPUIDLE_ASSIGN_OR_RETURN(const Value* steps, Array(doc, root, "steps", Report::kMaxStepRows));
    const Path at_steps{&root, "steps"};
    r.steps.resize(steps->Size());
    int64_t steps_ns = 0;
    for (rapidjson::SizeType i = 0; i < steps->Size(); ++i) {
      const Path at_step{&at_steps, "", i};
      GPUIDLE_RETURN_IF_ERROR(Step((*steps)[i], at_step, &r.steps[i]));
      GPUIDLE_RETURN_IF_ERROR(AddToSum(at_step, r.steps[i].end_ns - r.steps[i].start_ns, &steps_ns,
                                       "the steps' spans"));
    }
    GPUIDLE_ASSIGN_OR_RETURN(const Value* gaps, Array(doc, root, "longest_gaps"));
    const Path at_gaps{&root, "longest_gaps"};
    r.longest_gaps.resize(gaps->Size());
    int64_t gaps_ns = 0;
    for (rapidjson::SizeType i = 0; i < gaps->Size(); ++i) {
      const Path at_gap{&at_gaps, "", i};
      GPUIDLE_RETURN_IF_ERROR(Gap((*gaps)[i], at_gap, &r.longest_gaps[i]));
      GPUIDLE_RETURN_IF_ERROR(AddToSum(at_gap,
                                       r.longest_gaps[i].end_ns - r.longest_gaps[i].start_ns,
                                       &gaps_ns, "the gaps' spans"));
    }
    GPUIDLE_ASSIGN_OR_RETURN(const Value* offenders, Array(doc, root, "offenders"));
    const Path at_offenders{&root, "offenders"};
    r.offenders.resize(offenders->Size());
    int64_t offenders_ns = 0;
    for (rapidjson::SizeType i = 0; i < offenders->Size(); ++i) {
      const Path at_offender{&at_offenders, "", i};
      GPUIDLE_RETURN_IF_ERROR(OffenderAt((*offenders)[i], at_offender, &r.offenders[i]));
      GPUIDLE_RETURN_IF_ERROR(AddToSum({&at_offender, "idle_ns"}, r.offenders[i].idle_ns,
                                       &offenders_ns, "the offenders' idle times"));
    }
    // Periodic work (optional: reports before issue 28 lack it).
    GPUIDLE_ASSIGN_OR_RETURN(const Value* periodic, Array(doc, root, "periodic_work",
                                                          kMaxReportListRows, Need::kOptional));
    if (periodic != nullptr) {
      const Path at_periodic{&root, "periodic_work"};
      r.periodic_work.resize(periodic->Size());
      int64_t span_ns = 0, idle_ns = 0;
      for (rapidjson::SizeType i = 0; i < periodic->Size(); ++i) {
        const Path at_row{&at_periodic, "", i};
        GPUIDLE_RETURN_IF_ERROR(PeriodicWorkAt((*periodic)[i], at_row, &r.periodic_work[i]));
        GPUIDLE_RETURN_IF_ERROR(AddToSum({&at_row, "span_ns"}, r.periodic_work[i].span_ns, &span_ns,
                                         "the periodic work's spans"));
        GPUIDLE_RETURN_IF_ERROR(AddToSum({&at_row, "idle_ns"}, r.periodic_work[i].idle_ns, &idle_ns,
                                         "the periodic work's idle times"));
      }
    }
    GPUIDLE_ASSIGN_OR_RETURN(const Value* advice, Array(doc, root, "advice"));
    const Path at_advice{&root, "advice"};
    r.advice.resize(advice->Size());
    for (rapidjson::SizeType i = 0; i < advice->Size(); ++i) {
      GPUIDLE_RETURN_IF_ERROR(AdviceAt((*advice)[i], {&at_advice, "", i}, &r.advice[i]));
    }
    GPUIDLE_RETURN_IF_ERROR(Options(doc, root, &r.options));
    return r;
  }

 private:
  // The member `key` of `obj`: nullptr when it is missing and optional.
  absl::StatusOr<const Value*> Get(const Value& obj, const Path& at, absl::string_view key,
                                   Need need = Need::kRequired) const {
    const Value name(
        rapidjson::StringRef(key.data(), static_cast<rapidjson::SizeType>(key.size())));
    const auto it = obj.FindMember(name);
    if (it != obj.MemberEnd()) return &it->value;
    if (need == Need::kOptional) return nullptr;
    return Error({&at, key}, "missing");
  }

  // An object (the report's own objects are checked to be objects before their members are read).
  absl::StatusOr<const Value*> Object(const Value& obj, const Path& at, absl::string_view key,
                                      Need need = Need::kRequired) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* v, Get(obj, at, key, need));
    if (v != nullptr && !v->IsObject()) return Error({&at, key}, "not an object");
    return v;
  }

  absl::StatusOr<const Value*> Array(const Value& obj, const Path& at, absl::string_view key,
                                     size_t max_rows = kMaxReportListRows,
                                     Need need = Need::kRequired) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* v, Get(obj, at, key, need));
    if (v == nullptr) return v;
    if (!v->IsArray()) return Error({&at, key}, "not an array");
    if (v->Size() > max_rows) {
      const Path here{&at, key};
      return absl::ResourceExhaustedError(
          absl::StrCat(name_, ": ", PathString(&here), ": more than ", max_rows, " rows"));
    }
    return v;
  }

  absl::Status CheckObject(const Value& v, const Path& at) const {
    return v.IsObject() ? absl::OkStatus() : Error(at, "not an object");
  }

  absl::Status Int64(const Value& obj, const Path& at, absl::string_view key, int64_t* out,
                     Need need = Need::kRequired) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* v, Get(obj, at, key, need));
    if (v == nullptr) return absl::OkStatus();
    if (!v->IsInt64()) return Error({&at, key}, "not a 64-bit integer");
    *out = v->GetInt64();
    return absl::OkStatus();
  }

  // A time stamp: in [kMinTimeNs, kMaxTimeNs) as in the timelines the reports come from, so that
  // the difference of two never overflows.
  absl::Status Time(const Value& obj, const Path& at, absl::string_view key, int64_t* out) const {
    GPUIDLE_RETURN_IF_ERROR(Int64(obj, at, key, out));
    if (*out < kMinTimeNs || *out >= kMaxTimeNs) {
      return Error({&at, key}, absl::StrCat(*out,
                                            " is not a time stamp gpuidle writes (-2^60 to "
                                            "2^63 - 2^60 ns)"));
    }
    return absl::OkStatus();
  }

  // An integer from 0 to max; `what` says what it is and its range in an error.
  absl::Status UpTo(const Value& obj, const Path& at, absl::string_view key, int64_t* out,
                    int64_t max, absl::string_view what, Need need) const {
    GPUIDLE_RETURN_IF_ERROR(Int64(obj, at, key, out, need));
    if (*out < 0 || *out > max) return Error({&at, key}, absl::StrCat(*out, " is not ", what));
    return absl::OkStatus();
  }

  // A length of time: 0 to kMaxDurationNs, as every span of a timeline.
  absl::Status Duration(const Value& obj, const Path& at, absl::string_view key, int64_t* out,
                        Need need = Need::kRequired) const {
    return UpTo(obj, at, key, out, kMaxDurationNs, "a length of time gpuidle writes (0 to 2^52 ns)",
                need);
  }

  // A number of things (kernels, windows, bytes): 0 to kMaxReportSum.
  absl::Status Count(const Value& obj, const Path& at, absl::string_view key, int64_t* out,
                     Need need = Need::kRequired) const {
    return UpTo(obj, at, key, out, kMaxReportSum, "a count gpuidle writes (0 to 2^62 - 1)", need);
  }

  // A share: 0 to 1, or null (not known: NaN).
  absl::Status Share(const Value& obj, const Path& at, absl::string_view key, double* out) const {
    GPUIDLE_RETURN_IF_ERROR(Double(obj, at, key, out));
    if (*out < 0 || *out > 1) return Error({&at, key}, absl::StrCat(*out, " is not within 0 to 1"));
    return absl::OkStatus();
  }

  // A span's end at or after its start.
  absl::Status InOrder(const Path& at, absl::string_view start_key, int64_t start,
                       absl::string_view end_key, int64_t end) const {
    if (start <= end) return absl::OkStatus();
    return Error({&at, end_key}, absl::StrCat(end, " is before ", start_key, " (", start,
                                              "): it ends before it starts"));
  }

  // Adds `value` to a running total, which must stay within kMaxReportSum: the writers, the diff
  // and the merges add these up.
  absl::Status AddToSum(const Path& at, int64_t value, int64_t* sum, absl::string_view what) const {
    if (__builtin_add_overflow(*sum, value, sum) || *sum > kMaxReportSum) {
      return Error(at, absl::StrCat(what, " add up to 2^62 or more"));
    }
    return absl::OkStatus();
  }

  // A part no larger than its whole ("busy_ns 5 is more than steady state 3").
  absl::Status Within(const Path& at, absl::string_view key, int64_t part,
                      absl::string_view whole_name, int64_t whole) const {
    if (part <= whole) return absl::OkStatus();
    return Error({&at, key}, absl::StrCat(part, " is more than ", whole_name, " (", whole, ")"));
  }

  absl::Status Uint64(const Value& obj, const Path& at, absl::string_view key, uint64_t* out,
                      Need need = Need::kRequired) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* v, Get(obj, at, key, need));
    if (v == nullptr) return absl::OkStatus();
    if (!v->IsUint64()) return Error({&at, key}, "not an unsigned 64-bit integer");
    *out = v->GetUint64();
    return absl::OkStatus();
  }

  absl::Status Int(const Value& obj, const Path& at, absl::string_view key, int* out,
                   Need need = Need::kRequired) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* v, Get(obj, at, key, need));
    if (v == nullptr) return absl::OkStatus();
    if (!v->IsInt()) return Error({&at, key}, "not a 32-bit integer");
    *out = v->GetInt();
    return absl::OkStatus();
  }

  absl::Status OptionalInt(const Value& obj, const Path& at, absl::string_view key,
                           std::optional<int>* out, Need need = Need::kRequired) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* v, Get(obj, at, key, need));
    if (v == nullptr || v->IsNull()) return absl::OkStatus();
    if (!v->IsInt()) return Error({&at, key}, "not a 32-bit integer (nor null)");
    *out = v->GetInt();
    return absl::OkStatus();
  }

  absl::Status OptionalInt64(const Value& obj, const Path& at, absl::string_view key,
                             std::optional<int64_t>* out, Need need = Need::kRequired) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* v, Get(obj, at, key, need));
    if (v == nullptr || v->IsNull()) return absl::OkStatus();
    if (!v->IsInt64()) return Error({&at, key}, "not a 64-bit integer (nor null)");
    *out = v->GetInt64();
    return absl::OkStatus();
  }

  absl::Status Bool(const Value& obj, const Path& at, absl::string_view key, bool* out) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* v, Get(obj, at, key));
    if (!v->IsBool()) return Error({&at, key}, "not true or false");
    *out = v->GetBool();
    return absl::OkStatus();
  }

  // A number; null (the writer's NaN or infinity) reads as NaN.
  absl::Status Double(const Value& obj, const Path& at, absl::string_view key, double* out) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* v, Get(obj, at, key));
    if (v->IsNull()) {
      *out = std::numeric_limits<double>::quiet_NaN();
      return absl::OkStatus();
    }
    if (!v->IsNumber()) return Error({&at, key}, "not a number (nor null)");
    *out = v->GetDouble();
    return absl::OkStatus();
  }

  absl::Status String(const Value& obj, const Path& at, absl::string_view key, std::string* out,
                      Need need = Need::kRequired) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* v, Get(obj, at, key, need));
    if (v == nullptr) return absl::OkStatus();
    if (!v->IsString()) return Error({&at, key}, "not a string");
    out->assign(v->GetString(), v->GetStringLength());
    return absl::OkStatus();
  }

  absl::Status Strings(const Value& obj, const Path& at, absl::string_view key,
                       std::vector<std::string>* out) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* a, Array(obj, at, key));
    const Path here{&at, key};
    out->reserve(a->Size());
    for (rapidjson::SizeType i = 0; i < a->Size(); ++i) {
      const Value& v = (*a)[i];
      if (!v.IsString()) return Error({&here, "", i}, "not a string");
      out->emplace_back(v.GetString(), v.GetStringLength());
    }
    return absl::OkStatus();
  }

  absl::Status Ints(const Value& obj, const Path& at, absl::string_view key, std::vector<int>* out,
                    Need need = Need::kRequired) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* a, Array(obj, at, key, kMaxReportListRows, need));
    if (a == nullptr) return absl::OkStatus();
    const Path here{&at, key};
    out->reserve(a->Size());
    for (rapidjson::SizeType i = 0; i < a->Size(); ++i) {
      const Value& v = (*a)[i];
      if (!v.IsInt()) return Error({&here, "", i}, "not a 32-bit integer");
      out->push_back(v.GetInt());
    }
    return absl::OkStatus();
  }

  // "cause" and "subcause" (qualified); the cause must be the subcause's.
  absl::Status CauseFields(const Value& obj, const Path& at, Subcause* out) const {
    std::string cause, subcause;
    GPUIDLE_RETURN_IF_ERROR(String(obj, at, "subcause", &subcause));
    const std::optional<Subcause> s = ParseSubcause(subcause);
    if (!s) return Error({&at, "subcause"}, absl::StrCat("unknown ", QuoteForMessage(subcause)));
    GPUIDLE_RETURN_IF_ERROR(String(obj, at, "cause", &cause));
    if (cause != CauseName(CauseOf(*s))) {
      return Error({&at, "cause"}, absl::StrCat(QuoteForMessage(cause), " is not the cause of ",
                                                QuoteForMessage(subcause)));
    }
    *out = *s;
    return absl::OkStatus();
  }

  // idle_by_subcause: every subcause's ns (idle_by_cause is their sum, not read). Not negative,
  // and their sum fits (the writers add them up). sync_bound.allocator came later within
  // gpuidle.report/2: 0 where a report has none.
  absl::Status Subcauses(const Value& obj, const Path& at, IdleBreakdown* idle) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* by, Object(obj, at, "idle_by_subcause"));
    const Path here{&at, "idle_by_subcause"};
    int64_t total = 0;
    for (int s = 0; s < kNumSubcauses; ++s) {
      const std::string name = QualifiedSubcauseName(static_cast<Subcause>(s));
      const Need need =
          static_cast<Subcause>(s) == Subcause::kAllocator ? Need::kOptional : Need::kRequired;
      GPUIDLE_RETURN_IF_ERROR(Int64(*by, here, name, &idle->ns[s], need));
      if (idle->ns[s] < 0) return Error({&here, name}, "negative");
      if (__builtin_add_overflow(total, idle->ns[s], &total)) {
        return Error(here, "the sum of the subcauses overflows");
      }
    }
    return absl::OkStatus();
  }

  // The parts of one phase: not negative, and their sum fits (the writers add them up).
  absl::Status Parts(const Value& phase, const Path& at, Phase p, DeviceReport* d) const {
    int64_t sum = 0;
    GPUIDLE_ASSIGN_OR_RETURN(const Value* parts, Array(phase, at, "parts"));
    const Path here{&at, "parts"};
    for (rapidjson::SizeType i = 0; i < parts->Size(); ++i) {
      const Value& v = (*parts)[i];
      const Path at_part{&here, "", i};
      GPUIDLE_RETURN_IF_ERROR(CheckObject(v, at_part));
      OneOffTime o;
      o.phase = p;
      std::string kind;
      GPUIDLE_RETURN_IF_ERROR(String(v, at_part, "kind", &kind));
      const std::optional<OneOffKind> k = ParseOneOffKind(kind);
      if (!k) return Error({&at_part, "kind"}, absl::StrCat("unknown ", QuoteForMessage(kind)));
      o.kind = *k;
      GPUIDLE_RETURN_IF_ERROR(Duration(v, at_part, "ns", &o.ns));
      GPUIDLE_RETURN_IF_ERROR(AddToSum({&at_part, "ns"}, o.ns, &sum, "the parts"));
      GPUIDLE_RETURN_IF_ERROR(Count(v, at_part, "count", &o.count));
      GPUIDLE_RETURN_IF_ERROR(String(v, at_part, "evidence", &o.evidence));
      d->one_off.push_back(std::move(o));
    }
    return absl::OkStatus();
  }

  // phases: the window's ends, each phase's time and its one-off parts. The spans must agree with
  // the device's steady_start_ns and steady_end_ns.
  absl::Status Phases(const Value& obj, const Path& at, DeviceReport* d) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* phases, Object(obj, at, "phases"));
    const Path here{&at, "phases"};
    std::array<int64_t, kNumPhases> ns{};
    std::array<int64_t, kNumPhases> start{};
    std::array<int64_t, kNumPhases> end{};
    for (int i = 0; i < kNumPhases; ++i) {
      const Phase p = static_cast<Phase>(i);
      const absl::string_view key = PhaseName(p);
      GPUIDLE_ASSIGN_OR_RETURN(const Value* phase, Object(*phases, here, key));
      const Path at_phase{&here, key};
      GPUIDLE_RETURN_IF_ERROR(Time(*phase, at_phase, "start_ns", &start[i]));
      GPUIDLE_RETURN_IF_ERROR(Time(*phase, at_phase, "end_ns", &end[i]));
      GPUIDLE_RETURN_IF_ERROR(InOrder(at_phase, "start_ns", start[i], "end_ns", end[i]));
      if (end[i] - start[i] > kMaxDurationNs) return Error(at_phase, "longer than 2^52 ns");
      GPUIDLE_RETURN_IF_ERROR(Duration(*phase, at_phase, "ns", &ns[i]));
      GPUIDLE_RETURN_IF_ERROR(Parts(*phase, at_phase, p, d));
    }
    constexpr int kStart = static_cast<int>(Phase::kStartUp);
    constexpr int kSteady = static_cast<int>(Phase::kSteady);
    constexpr int kWind = static_cast<int>(Phase::kWindDown);
    const auto must_be = [&](int phase, absl::string_view key, int64_t got, int64_t want,
                             absl::string_view what) -> absl::Status {
      if (got == want) return absl::OkStatus();
      const Path at_phase{&here, PhaseName(static_cast<Phase>(phase))};
      return Error({&at_phase, key}, absl::StrCat(got, " is not ", what, " (", want, ")"));
    };
    GPUIDLE_RETURN_IF_ERROR(
        must_be(kStart, "end_ns", end[kStart], d->steady_start_ns, "steady_start_ns"));
    GPUIDLE_RETURN_IF_ERROR(
        must_be(kSteady, "start_ns", start[kSteady], d->steady_start_ns, "steady_start_ns"));
    GPUIDLE_RETURN_IF_ERROR(
        must_be(kSteady, "end_ns", end[kSteady], d->steady_end_ns, "steady_end_ns"));
    GPUIDLE_RETURN_IF_ERROR(
        must_be(kWind, "start_ns", start[kWind], d->steady_end_ns, "steady_end_ns"));
    d->window_start_ns = start[kStart];
    d->window_end_ns = end[kWind];
    // A report aggregated over the windows of a sampled collection has phase times that are not
    // the spans' lengths (DeviceReport::phase_ns).
    for (int i = 0; i < kNumPhases; ++i) {
      if (d->PhaseNs(static_cast<Phase>(i)) != ns[i]) d->phase_ns = ns;
    }
    return absl::OkStatus();
  }

  absl::Status Collectives(const Value& obj, const Path& at, DeviceReport* d) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* list,
                             Array(obj, at, "collectives", kMaxReportListRows, Need::kOptional));
    if (list == nullptr) return absl::OkStatus();
    const Path here{&at, "collectives"};
    d->collectives.resize(list->Size());
    int64_t kinds_ns = 0;
    // A kind is its group and op, listed once (the merge looks kinds up by them).
    absl::flat_hash_set<std::pair<absl::string_view, absl::string_view>> kinds;
    for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
      const Value& v = (*list)[i];
      const Path at_kind{&here, "", i};
      GPUIDLE_RETURN_IF_ERROR(CheckObject(v, at_kind));
      CollectiveStats& c = d->collectives[i];
      GPUIDLE_RETURN_IF_ERROR(String(v, at_kind, "group", &c.group));
      GPUIDLE_RETURN_IF_ERROR(String(v, at_kind, "op", &c.op));
      if (!kinds.emplace(c.group, c.op).second) {
        return Error(at_kind, absl::StrCat("the kind ", QuoteForMessage(c.op), " of group ",
                                           QuoteForMessage(c.group), " is listed twice"));
      }
      GPUIDLE_RETURN_IF_ERROR(Count(v, at_kind, "count", &c.count));
      GPUIDLE_RETURN_IF_ERROR(Duration(v, at_kind, "ns", &c.ns));
      GPUIDLE_RETURN_IF_ERROR(Duration(v, at_kind, "exposed_ns", &c.exposed_ns));
      GPUIDLE_RETURN_IF_ERROR(Within(at_kind, "exposed_ns", c.exposed_ns, "ns", c.ns));
      GPUIDLE_RETURN_IF_ERROR(OptionalInt64(v, at_kind, "bytes", &c.bytes, Need::kOptional));
      if (c.bytes.value_or(0) < 0) return Error({&at_kind, "bytes"}, "negative");
      GPUIDLE_RETURN_IF_ERROR(OptionalInt64(v, at_kind, "wait_ns", &c.wait_ns, Need::kOptional));
      GPUIDLE_RETURN_IF_ERROR(Within(at_kind, "wait_ns", c.wait_ns.value_or(0), "ns", c.ns));
      if (c.wait_ns.value_or(0) < 0) return Error({&at_kind, "wait_ns"}, "negative");
      GPUIDLE_RETURN_IF_ERROR(
          AddToSum({&at_kind, "ns"}, c.ns, &kinds_ns, "the collectives' times"));
    }
    return absl::OkStatus();
  }

  // collective_timings: five columns of one length (docs/REPORT_SCHEMA.md).
  absl::Status CollectiveTimings(const Value& obj, const Path& at, DeviceReport* d) const {
    GPUIDLE_RETURN_IF_ERROR(
        Int64(obj, at, "collectives_not_listed", &d->collectives_not_listed, Need::kOptional));
    if (d->collectives_not_listed < 0) return Error({&at, "collectives_not_listed"}, "negative");
    GPUIDLE_ASSIGN_OR_RETURN(const Value* table,
                             Object(obj, at, "collective_timings", Need::kOptional));
    if (table == nullptr) return absl::OkStatus();
    const Path here{&at, "collective_timings"};
    constexpr std::array<absl::string_view, 5> kColumns = {"start_ns", "duration_ns", "seq",
                                                           "bytes", "kind"};
    std::array<const Value*, 5> columns{};
    for (size_t c = 0; c < kColumns.size(); ++c) {
      GPUIDLE_ASSIGN_OR_RETURN(columns[c],
                               Array(*table, here, kColumns[c], DeviceReport::kMaxCollectiveRows));
      if (columns[c]->Size() != columns[0]->Size()) {
        return Error({&here, kColumns[c]},
                     absl::StrCat(columns[c]->Size(), " rows, start_ns has ", columns[0]->Size()));
      }
    }
    const rapidjson::SizeType rows = columns[0]->Size();
    d->collective_timings.resize(rows);
    for (rapidjson::SizeType i = 0; i < rows; ++i) {
      std::array<int64_t, 5> v{};
      for (size_t c = 0; c < kColumns.size(); ++c) {
        const Value& cell = (*columns[c])[i];
        if (!cell.IsInt64()) {
          const Path at_column{&here, kColumns[c]};
          return Error({&at_column, "", i}, "not a 64-bit integer");
        }
        v[c] = cell.GetInt64();
      }
      const auto cell_error = [&](size_t c, absl::string_view what) {
        const Path at_column{&here, kColumns[c]};
        return Error({&at_column, "", i}, what);
      };
      CollectiveTiming& t = d->collective_timings[i];
      t.start_ns = v[0];
      if (v[0] < kMinTimeNs || v[0] >= kMaxTimeNs) return cell_error(0, "not a time stamp");
      if (v[1] < 0 || v[1] > kMaxDurationNs) return cell_error(1, "negative or beyond 2^52 ns");
      t.end_ns = v[0] + v[1];
      if (t.end_ns >= kMaxTimeNs) return cell_error(1, "ends past the last time stamp");
      t.seq = v[2];
      if (t.seq < -1) return cell_error(2, "below -1 (none)");
      t.bytes = v[3];
      if (t.bytes < -1) return cell_error(3, "below -1 (not known)");
      if (v[4] < 0 || static_cast<uint64_t>(v[4]) >= d->collectives.size()) {
        return cell_error(4, absl::StrCat(v[4], " is not an index into collectives (",
                                          d->collectives.size(), " kinds)"));
      }
      t.kind = static_cast<int32_t>(v[4]);
    }
    return absl::OkStatus();
  }

  // The timeline's conservation: the phases tile the window, and the steady state is busy, idle
  // and one-off time (tests/analysis/invariants_test.cc holds the analysis to the same).
  absl::Status Conserved(const Path& at, const DeviceReport& d) const {
    const int64_t phases =
        d.PhaseNs(Phase::kStartUp) + d.PhaseNs(Phase::kSteady) + d.PhaseNs(Phase::kWindDown);
    if (phases != d.window_ns) {
      return Error({&at, "window_ns"},
                   absl::StrCat(d.window_ns, " is not the phases' sum (", phases, ")"));
    }
    const int64_t steady = d.busy_ns + d.idle_ns + d.SteadyOneOffNs();
    if (steady != d.PhaseNs(Phase::kSteady)) {
      return Error({&at, "busy_ns"},
                   absl::StrCat("busy_ns + idle_ns + the steady state's one-off parts (", steady,
                                ") is not the steady state (", d.PhaseNs(Phase::kSteady), ")"));
    }
    return absl::OkStatus();
  }

  absl::Status Device(const Value& v, const Path& at, DeviceReport* d) const {
    GPUIDLE_RETURN_IF_ERROR(CheckObject(v, at));
    GPUIDLE_RETURN_IF_ERROR(OptionalInt(v, at, "rank", &d->rank));
    GPUIDLE_RETURN_IF_ERROR(Int(v, at, "device", &d->device));
    GPUIDLE_RETURN_IF_ERROR(String(v, at, "name", &d->name));
    GPUIDLE_RETURN_IF_ERROR(Duration(v, at, "window_ns", &d->window_ns));
    GPUIDLE_RETURN_IF_ERROR(Time(v, at, "steady_start_ns", &d->steady_start_ns));
    GPUIDLE_RETURN_IF_ERROR(Time(v, at, "steady_end_ns", &d->steady_end_ns));
    GPUIDLE_RETURN_IF_ERROR(
        InOrder(at, "steady_start_ns", d->steady_start_ns, "steady_end_ns", d->steady_end_ns));
    GPUIDLE_RETURN_IF_ERROR(Duration(v, at, "busy_ns", &d->busy_ns));
    GPUIDLE_RETURN_IF_ERROR(Duration(v, at, "idle_ns", &d->idle_ns));
    GPUIDLE_RETURN_IF_ERROR(Subcauses(v, at, &d->idle));
    if (d->idle.TotalNs() != d->idle_ns) {
      return Error({&at, "idle_by_subcause"}, absl::StrCat("adds up to ", d->idle.TotalNs(),
                                                           ", not idle_ns (", d->idle_ns, ")"));
    }
    GPUIDLE_RETURN_IF_ERROR(Phases(v, at, d));
    GPUIDLE_RETURN_IF_ERROR(Conserved(at, *d));
    GPUIDLE_RETURN_IF_ERROR(Count(v, at, "step_count", &d->step_count, Need::kOptional));
    GPUIDLE_RETURN_IF_ERROR(Duration(v, at, "tracer_ns", &d->tracer_ns, Need::kOptional));
    GPUIDLE_RETURN_IF_ERROR(Count(v, at, "kernel_count", &d->kernel_count));
    GPUIDLE_RETURN_IF_ERROR(Count(v, at, "memcpy_count", &d->memcpy_count));
    GPUIDLE_RETURN_IF_ERROR(Count(v, at, "memset_count", &d->memset_count));
    GPUIDLE_RETURN_IF_ERROR(Duration(v, at, "comm_ns", &d->comm_ns));
    GPUIDLE_RETURN_IF_ERROR(Within(at, "comm_ns", d->comm_ns, "busy_ns", d->busy_ns));
    GPUIDLE_RETURN_IF_ERROR(Duration(v, at, "exposed_comm_ns", &d->exposed_comm_ns));
    GPUIDLE_RETURN_IF_ERROR(
        Within(at, "exposed_comm_ns", d->exposed_comm_ns, "comm_ns", d->comm_ns));
    GPUIDLE_RETURN_IF_ERROR(OptionalInt64(v, at, "comm_wait_ns", &d->comm_wait_ns));
    if (d->comm_wait_ns.value_or(0) < 0) return Error({&at, "comm_wait_ns"}, "negative");
    GPUIDLE_RETURN_IF_ERROR(
        Within(at, "comm_wait_ns", d->comm_wait_ns.value_or(0), "comm_ns", d->comm_ns));
    GPUIDLE_RETURN_IF_ERROR(CopyTotalsOf(v, at, d));
    GPUIDLE_RETURN_IF_ERROR(GraphReplaysOf(v, at, d));
    GPUIDLE_RETURN_IF_ERROR(Collectives(v, at, d));
    GPUIDLE_RETURN_IF_ERROR(CollectiveTimings(v, at, d));
    return TimelineOf(v, at, d);
  }

  // timeline (optional: older reports lack it): columns of one length, at most
  // TimelineSummary::kBins, each cell within [0, bin_ns].
  absl::Status TimelineOf(const Value& obj, const Path& at, DeviceReport* d) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* t, Object(obj, at, "timeline", Need::kOptional));
    if (t == nullptr) return absl::OkStatus();
    const Path here{&at, "timeline"};
    TimelineSummary& out = d->timeline;
    GPUIDLE_RETURN_IF_ERROR(Time(*t, here, "start_ns", &out.start_ns));
    GPUIDLE_RETURN_IF_ERROR(Int64(*t, here, "bin_ns", &out.bin_ns));
    if (out.bin_ns <= 0 || out.bin_ns > kMaxDurationNs) {
      return Error({&here, "bin_ns"}, "not positive or beyond 2^52 ns");
    }
    GPUIDLE_ASSIGN_OR_RETURN(const Value* idle, Object(*t, here, "idle_ns"));
    const Path at_idle{&here, "idle_ns"};
    // busy_ns, one_off_ns, then the causes' columns.
    std::array<const Value*, 2 + kNumCauses> columns{};
    std::array<Path, 2 + kNumCauses> paths{};
    const auto column = [&](size_t c, const Value& from, const Path& parent,
                            absl::string_view key) -> absl::Status {
      GPUIDLE_ASSIGN_OR_RETURN(columns[c], Array(from, parent, key, TimelineSummary::kBins));
      paths[c] = Path{&parent, key};
      if (columns[c]->Size() != columns[0]->Size()) {
        return Error(paths[c],
                     absl::StrCat(columns[c]->Size(), " bins, busy_ns has ", columns[0]->Size()));
      }
      return absl::OkStatus();
    };
    GPUIDLE_RETURN_IF_ERROR(column(0, *t, here, "busy_ns"));
    GPUIDLE_RETURN_IF_ERROR(column(1, *t, here, "one_off_ns"));
    for (int c = 0; c < kNumCauses; ++c) {
      GPUIDLE_RETURN_IF_ERROR(
          column(2 + static_cast<size_t>(c), *idle, at_idle, CauseName(static_cast<Cause>(c))));
    }
    if (out.bin_ns * static_cast<int64_t>(columns[0]->Size()) > kMaxDurationNs) {
      return Error({&here, "bin_ns"}, "the bins reach beyond 2^52 ns");
    }
    out.bins.resize(columns[0]->Size());
    for (size_t c = 0; c < columns.size(); ++c) {
      for (rapidjson::SizeType i = 0; i < columns[c]->Size(); ++i) {
        const Value& cell = (*columns[c])[i];
        if (!cell.IsInt64() || cell.GetInt64() < 0 || cell.GetInt64() > out.bin_ns) {
          return Error({&paths[c], "", i}, "not an integer within [0, bin_ns]");
        }
        TimelineSummary::Bin& b = out.bins[i];
        int64_t& cell_out = c == 0 ? b.busy_ns : c == 1 ? b.one_off_ns : b.idle_ns[c - 2];
        cell_out = cell.GetInt64();
      }
    }
    return absl::OkStatus();
  }

  // h2d_copies (optional: reports before it lack it).
  absl::Status CopyTotalsOf(const Value& obj, const Path& at, DeviceReport* d) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* copies, Object(obj, at, "h2d_copies", Need::kOptional));
    if (copies == nullptr) return absl::OkStatus();
    const Path here{&at, "h2d_copies"};
    for (auto [key, totals] :
         {std::pair{"pageable", &d->h2d_pageable}, std::pair{"pinned", &d->h2d_pinned}}) {
      GPUIDLE_ASSIGN_OR_RETURN(const Value* v, Object(*copies, here, key));
      const Path at_kind{&here, key};
      GPUIDLE_RETURN_IF_ERROR(Count(*v, at_kind, "count", &totals->count));
      GPUIDLE_RETURN_IF_ERROR(Count(*v, at_kind, "bytes", &totals->bytes));
      GPUIDLE_RETURN_IF_ERROR(Duration(*v, at_kind, "ns", &totals->ns));
    }
    return absl::OkStatus();
  }

  // graph_replays (optional: reports before it lack it).
  absl::Status GraphReplaysOf(const Value& obj, const Path& at, DeviceReport* d) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* g, Object(obj, at, "graph_replays", Need::kOptional));
    if (g == nullptr) return absl::OkStatus();
    const Path here{&at, "graph_replays"};
    GraphReplays& out = d->graph_replays;
    GPUIDLE_RETURN_IF_ERROR(Count(*g, here, "launches", &out.launches));
    GPUIDLE_RETURN_IF_ERROR(Count(*g, here, "kernels", &out.kernels));
    GPUIDLE_RETURN_IF_ERROR(Count(*g, here, "kernels_alone", &out.kernels_alone));
    if (out.launches > out.kernels) return Error(here, "more launches than kernels");
    return absl::OkStatus();
  }

  absl::Status Step(const Value& v, const Path& at, StepReport* s) const {
    GPUIDLE_RETURN_IF_ERROR(CheckObject(v, at));
    GPUIDLE_RETURN_IF_ERROR(OptionalInt(v, at, "rank", &s->rank));
    GPUIDLE_RETURN_IF_ERROR(Int(v, at, "device", &s->device));
    GPUIDLE_RETURN_IF_ERROR(String(v, at, "name", &s->name));
    GPUIDLE_RETURN_IF_ERROR(Time(v, at, "start_ns", &s->start_ns));
    GPUIDLE_RETURN_IF_ERROR(Time(v, at, "end_ns", &s->end_ns));
    GPUIDLE_RETURN_IF_ERROR(InOrder(at, "start_ns", s->start_ns, "end_ns", s->end_ns));
    if (s->end_ns - s->start_ns > kMaxDurationNs) return Error(at, "longer than 2^52 ns");
    GPUIDLE_RETURN_IF_ERROR(Duration(v, at, "busy_ns", &s->busy_ns));
    GPUIDLE_RETURN_IF_ERROR(Subcauses(v, at, &s->idle));
    GPUIDLE_RETURN_IF_ERROR(Duration(v, at, "one_off_ns", &s->one_off_ns, Need::kOptional));
    // A step's span is its busy, idle and one-off time.
    const int64_t parts = s->busy_ns + s->idle.TotalNs() + s->one_off_ns;
    if (parts != s->end_ns - s->start_ns) {
      return Error({&at, "busy_ns"},
                   absl::StrCat("busy_ns + idle + one_off_ns (", parts,
                                ") is not the step's span (", s->end_ns - s->start_ns, ")"));
    }
    GPUIDLE_RETURN_IF_ERROR(
        OptionalInt64(v, at, "comm_wait_ns", &s->comm_wait_ns, Need::kOptional));
    if (s->comm_wait_ns.value_or(0) < 0) return Error({&at, "comm_wait_ns"}, "negative");
    return Within(at, "comm_wait_ns", s->comm_wait_ns.value_or(0), "busy_ns", s->busy_ns);
  }

  absl::Status Gap(const Value& v, const Path& at, GapRecord* g) const {
    GPUIDLE_RETURN_IF_ERROR(CheckObject(v, at));
    GPUIDLE_RETURN_IF_ERROR(OptionalInt(v, at, "rank", &g->rank));
    GPUIDLE_RETURN_IF_ERROR(Int(v, at, "device", &g->device));
    GPUIDLE_RETURN_IF_ERROR(Time(v, at, "start_ns", &g->start_ns));
    GPUIDLE_RETURN_IF_ERROR(Time(v, at, "end_ns", &g->end_ns));
    GPUIDLE_RETURN_IF_ERROR(InOrder(at, "start_ns", g->start_ns, "end_ns", g->end_ns));
    if (g->end_ns - g->start_ns > kMaxDurationNs) return Error(at, "longer than 2^52 ns");
    GPUIDLE_RETURN_IF_ERROR(CauseFields(v, at, &g->subcause));
    GPUIDLE_RETURN_IF_ERROR(String(v, at, "next_op", &g->next_op));
    GPUIDLE_RETURN_IF_ERROR(Uint64(v, at, "thread", &g->thread));
    GPUIDLE_RETURN_IF_ERROR(String(v, at, "evidence", &g->evidence));
    return String(v, at, "call_site", &g->call_site);
  }

  absl::Status OffenderAt(const Value& v, const Path& at, Offender* o) const {
    GPUIDLE_RETURN_IF_ERROR(CheckObject(v, at));
    GPUIDLE_RETURN_IF_ERROR(CauseFields(v, at, &o->subcause));
    GPUIDLE_RETURN_IF_ERROR(String(v, at, "what", &o->what));
    GPUIDLE_RETURN_IF_ERROR(String(v, at, "site", &o->site));
    GPUIDLE_RETURN_IF_ERROR(Count(v, at, "idle_ns", &o->idle_ns));
    return Count(v, at, "count", &o->count);
  }

  absl::Status PeriodicWorkAt(const Value& v, const Path& at, PeriodicWork* p) const {
    GPUIDLE_RETURN_IF_ERROR(CheckObject(v, at));
    GPUIDLE_RETURN_IF_ERROR(String(v, at, "activity", &p->activity));
    GPUIDLE_RETURN_IF_ERROR(String(v, at, "site", &p->site));
    GPUIDLE_RETURN_IF_ERROR(Count(v, at, "occurrences", &p->occurrences));
    GPUIDLE_RETURN_IF_ERROR(Count(v, at, "span_ns", &p->span_ns));
    GPUIDLE_RETURN_IF_ERROR(Count(v, at, "idle_ns", &p->idle_ns));
    GPUIDLE_RETURN_IF_ERROR(Subcauses(v, at, &p->idle));
    if (p->idle.TotalNs() != p->idle_ns) {
      return Error({&at, "idle_by_subcause"}, "does not add up to idle_ns");
    }
    return String(v, at, "fix", &p->fix);
  }

  absl::Status AdviceAt(const Value& v, const Path& at, Advice* a) const {
    GPUIDLE_RETURN_IF_ERROR(CheckObject(v, at));
    GPUIDLE_RETURN_IF_ERROR(CauseFields(v, at, &a->subcause));
    GPUIDLE_RETURN_IF_ERROR(Share(v, at, "share_of_lost_time", &a->share_of_lost_time));
    GPUIDLE_RETURN_IF_ERROR(String(v, at, "fix", &a->fix));
    // The predicted gain (optional: reports before it lack it).
    GPUIDLE_RETURN_IF_ERROR(Count(v, at, "gain_ns", &a->gain_ns, Need::kOptional));
    GPUIDLE_RETURN_IF_ERROR(
        OptionalInt64(v, at, "gain_per_step_ns", &a->gain_per_step_ns, Need::kOptional));
    const int64_t per_step = a->gain_per_step_ns.value_or(0);
    if (per_step < 0 || per_step > kMaxDurationNs) {
      return Error({&at, "gain_per_step_ns"}, "not a length of time gpuidle writes (0 to 2^52 ns)");
    }
    GPUIDLE_ASSIGN_OR_RETURN(const Value* share, Get(v, at, "gain_share_of_step", Need::kOptional));
    if (share != nullptr && !share->IsNull()) {
      double step_share = 0;
      GPUIDLE_RETURN_IF_ERROR(Share(v, at, "gain_share_of_step", &step_share));
      a->gain_share_of_step = step_share;
    }
    return String(v, at, "evidence", &a->evidence, Need::kOptional);
  }

  absl::Status VisibleDevices(const Value& doc, const Path& root, Report* r) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* list, Array(doc, root, "visible_devices",
                                                      kMaxReportListRows, Need::kOptional));
    if (list == nullptr) return absl::OkStatus();
    const Path here{&root, "visible_devices"};
    r->visible_devices.resize(list->Size());
    for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
      const Value& v = (*list)[i];
      const Path at{&here, "", i};
      GPUIDLE_RETURN_IF_ERROR(CheckObject(v, at));
      VisibleDevice& d = r->visible_devices[i];
      GPUIDLE_RETURN_IF_ERROR(OptionalInt(v, at, "rank", &d.rank));
      GPUIDLE_RETURN_IF_ERROR(Int(v, at, "device", &d.device));
      GPUIDLE_RETURN_IF_ERROR(OptionalInt(v, at, "physical_index", &d.physical_index));
      GPUIDLE_RETURN_IF_ERROR(String(v, at, "uuid", &d.uuid));
      GPUIDLE_RETURN_IF_ERROR(String(v, at, "name", &d.name));
      GPUIDLE_RETURN_IF_ERROR(Bool(v, at, "used", &d.used));
    }
    return absl::OkStatus();
  }

  absl::Status Ranks(const Value& doc, const Path& root, Report* r) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* list,
                             Array(doc, root, "ranks", kMaxReportListRows, Need::kOptional));
    if (list == nullptr) return absl::OkStatus();
    const Path here{&root, "ranks"};
    r->ranks.resize(list->Size());
    for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
      const Value& v = (*list)[i];
      const Path at{&here, "", i};
      GPUIDLE_RETURN_IF_ERROR(CheckObject(v, at));
      RankReport& k = r->ranks[i];
      GPUIDLE_RETURN_IF_ERROR(Int(v, at, "rank", &k.rank));
      GPUIDLE_RETURN_IF_ERROR(String(v, at, "host", &k.host));
      GPUIDLE_RETURN_IF_ERROR(OptionalInt64(v, at, "pid", &k.pid));
      GPUIDLE_RETURN_IF_ERROR(OptionalInt(v, at, "world_size", &k.world_size));
      GPUIDLE_RETURN_IF_ERROR(
          OptionalInt64(v, at, "wall_clock_offset_ns", &k.wall_clock_offset_ns));
      GPUIDLE_RETURN_IF_ERROR(Int64(v, at, "clock_offset_ns", &k.clock_offset_ns));
      // The offset to the job's clock moves time stamps within the timelines' range
      // (model/timeline.h); the wall clock's (ns since 1970) differs from another's within 2^63.
      if (k.clock_offset_ns < kMinTimeNs || k.clock_offset_ns > -kMinTimeNs) {
        return Error({&at, "clock_offset_ns"},
                     absl::StrCat(k.clock_offset_ns, " is beyond 2^60 ns either way"));
      }
      if (const int64_t wall = k.wall_clock_offset_ns.value_or(0);
          wall < -kMaxReportSum || wall > kMaxReportSum) {
        return Error({&at, "wall_clock_offset_ns"},
                     absl::StrCat(wall, " is 2^62 ns or more either way"));
      }
      GPUIDLE_RETURN_IF_ERROR(Count(v, at, "collectives", &k.collectives));
      GPUIDLE_RETURN_IF_ERROR(Count(v, at, "matched", &k.matched));
      GPUIDLE_RETURN_IF_ERROR(Within(at, "matched", k.matched, "collectives", k.collectives));
      GPUIDLE_RETURN_IF_ERROR(Count(v, at, "arrived_last", &k.arrived_last));
      GPUIDLE_RETURN_IF_ERROR(
          Within(at, "arrived_last", k.arrived_last, "collectives", k.collectives));
      GPUIDLE_RETURN_IF_ERROR(Count(v, at, "late_ns", &k.late_ns));
      GPUIDLE_RETURN_IF_ERROR(Count(v, at, "wait_ns", &k.wait_ns));
      GPUIDLE_ASSIGN_OR_RETURN(const Value* cause, Get(v, at, "own_cause"));
      if (!cause->IsNull()) {
        const std::optional<Subcause> s =
            cause->IsString()
                ? ParseSubcause(absl::string_view(cause->GetString(), cause->GetStringLength()))
                : std::nullopt;
        if (!s) return Error({&at, "own_cause"}, "not a qualified subcause (nor null)");
        k.own_cause = *s;
      }
      GPUIDLE_RETURN_IF_ERROR(Share(v, at, "own_cause_share", &k.own_cause_share));
    }
    return absl::OkStatus();
  }

  absl::Status Clock(const Value& doc, const Path& root, ClockAlignment* c) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* clock, Object(doc, root, "clock", Need::kOptional));
    if (clock == nullptr) return absl::OkStatus();
    const Path at{&root, "clock"};
    GPUIDLE_RETURN_IF_ERROR(String(*clock, at, "method", &c->method));
    GPUIDLE_RETURN_IF_ERROR(Count(*clock, at, "hosts", &c->hosts));
    GPUIDLE_RETURN_IF_ERROR(Count(*clock, at, "residual_ns", &c->residual_ns));
    return Share(*clock, at, "matched_share", &c->matched_share);
  }

  absl::Status Options(const Value& doc, const Path& root, AnalysisOptions* o) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* options, Object(doc, root, "options"));
    const Path at{&root, "options"};
    GPUIDLE_RETURN_IF_ERROR(Duration(*options, at, "launch_gap_max_ns", &o->launch_gap_max_ns));
    GPUIDLE_RETURN_IF_ERROR(
        Duration(*options, at, "dispatch_latency_max_ns", &o->dispatch_latency_max_ns));
    o->data_range_patterns.clear();
    GPUIDLE_RETURN_IF_ERROR(Strings(*options, at, "data_range_patterns", &o->data_range_patterns));
    GPUIDLE_RETURN_IF_ERROR(Int(*options, at, "skip_steps", &o->skip_steps, Need::kOptional));
    if (o->skip_steps < 0) return Error({&at, "skip_steps"}, "negative");
    return absl::OkStatus();
  }

  std::string name_;
};

// `head` first, then the rest of the source it came from; if reading the head failed, that error
// in its place (the trace reader words it, as it would have without the look at the head).
class PrefixedSource : public ByteSource {
 public:
  PrefixedSource(std::string head, absl::Status head_error, std::unique_ptr<ByteSource> rest)
      : head_(std::move(head)), head_error_(std::move(head_error)), rest_(std::move(rest)) {}
  absl::StatusOr<size_t> Read(char* buffer, size_t n) override {
    if (at_ < head_.size()) {
      const size_t k = std::min(n, head_.size() - at_);
      head_.copy(buffer, k, at_);
      at_ += k;
      return k;
    }
    if (!head_error_.ok()) return head_error_;
    return rest_->Read(buffer, n);
  }
  uint64_t file_bytes_read() const override { return rest_->file_bytes_read(); }
  bool compressed() const override { return rest_->compressed(); }

 private:
  std::string head_;
  size_t at_ = 0;
  absl::Status head_error_;
  std::unique_ptr<ByteSource> rest_;
};

// Appends the source's bytes to `out` until it holds `limit` bytes or the source ends. The
// source's error as it is (it does not name the file).
absl::Status ReadUpTo(ByteSource& source, size_t limit, std::string* out) {
  while (out->size() < limit) {
    const size_t old = out->size();
    const size_t want = std::min<size_t>(limit - old, size_t{1} << 20);
    out->resize(old + want);
    absl::StatusOr<size_t> n = source.Read(out->data() + old, want);
    if (!n.ok()) {
      out->resize(old);
      return n.status();
    }
    out->resize(old + *n);
    if (*n == 0) break;
  }
  return absl::OkStatus();
}

// The rest of a report after its head: at most kMaxReportBytes in all.
absl::StatusOr<Report> ReadRestOfReport(ByteSource& source, std::string bytes,
                                        const std::string& path) {
  if (absl::Status read = ReadUpTo(source, kMaxReportBytes + 1, &bytes); !read.ok()) {
    return absl::Status(read.code(), absl::StrCat(path, ": ", read.message()));
  }
  if (bytes.size() > kMaxReportBytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        path, ": a report longer than ", kMaxReportBytes, " bytes: gpuidle reads no longer one"));
  }
  return ParseReportJson(bytes, path);
}

absl::StatusOr<InputFile> ReadInputFileOrThrow(const std::string& path,
                                               const ReadProgress& progress) {
  GPUIDLE_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, OpenByteSource(path));
  constexpr size_t kHeadBytes = 4096;
  std::string head;
  absl::Status head_error = ReadUpTo(*source, kHeadBytes, &head);
  InputFile in;
  if (head_error.ok() && LooksLikeReportJson(head)) {
    GPUIDLE_ASSIGN_OR_RETURN(in.report, ReadRestOfReport(*source, std::move(head), path));
    return in;
  }
  // A trace, read as ReadTraceFile reads it (ingest/read_trace.cc).
  // Progress is told by the consumer of the read-ahead: in the calling thread.
  const std::unique_ptr<ByteSource> trace =
      WithProgress(ReadAhead(std::make_unique<PrefixedSource>(
                       std::move(head), std::move(head_error), std::move(source))),
                   progress);
  absl::StatusOr<Timeline> timeline = ReadKinetoTrace(*trace);
  if (!timeline.ok()) {
    return absl::Status(timeline.status().code(),
                        absl::StrCat(path, ": ", timeline.status().message()));
  }
  in.trace = *std::move(timeline);
  return in;
}

}  // namespace

absl::StatusOr<Report> ParseReportJson(absl::string_view json, absl::string_view name) {
  if (json.size() > kMaxReportBytes) {
    return absl::ResourceExhaustedError(absl::StrCat(
        name, ": a report longer than ", kMaxReportBytes, " bytes: gpuidle reads no longer one"));
  }
  try {
    rapidjson::Document doc;
    rapidjson::ParseResult result;
    std::string limit, duplicate;
    // Without recursion (a deep input cannot overflow the stack), UTF-8 checked, doubles exactly
    // as written (the writer's shortest form reads back to the same double: RawNumber).
    constexpr unsigned kFlags = rapidjson::kParseIterativeFlag |
                                rapidjson::kParseValidateEncodingFlag |
                                rapidjson::kParseNumbersAsStringsFlag;
    const auto parse = [&](rapidjson::Document& d) {
      LimitedHandler handler(d);
      rapidjson::MemoryStream stream(json.data(), json.size());
      rapidjson::Reader reader;
      result = reader.Parse<kFlags>(stream, handler);
      limit = handler.limit();
      duplicate = handler.duplicate();
      return !result.IsError();
    };
    doc.Populate(parse);
    if (!duplicate.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(name, ": ", duplicate, " (at byte ",
                                                     result.Offset(), "): not a gpuidle report"));
    }
    if (!limit.empty()) {
      return absl::ResourceExhaustedError(absl::StrCat(name, ": ", limit, " (at byte ",
                                                       result.Offset(), "): not a gpuidle report"));
    }
    if (result.IsError()) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": not JSON: ", rapidjson::GetParseError_En(result.Code()),
                       " (at byte ", result.Offset(), ")"));
    }
    return ReportParser(name).Parse(doc);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrCat(name, ": out of memory while reading the report"));
  }
}

absl::StatusOr<Report> ReadReportFile(const std::string& path) {
  try {
    GPUIDLE_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, OpenByteSource(path));
    return ReadRestOfReport(*source, "", path);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrCat(path, ": out of memory while reading the report"));
  }
}

bool LooksLikeReportJson(absl::string_view head) {
  size_t i = 0;
  const auto skip_space = [&] {
    while (i < head.size() &&
           (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t')) {
      ++i;
    }
  };
  const auto expect = [&](absl::string_view s) {
    skip_space();
    if (head.substr(i, s.size()) != s) return false;
    i += s.size();
    return true;
  };
  return expect("{") && expect("\"schema\"") && expect(":") &&
         expect(absl::StrCat("\"", kReportSchemaPrefix));
}

absl::StatusOr<InputFile> ReadInputFile(const std::string& path, const ReadProgress& progress) {
  try {
    return ReadInputFileOrThrow(path, progress);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrCat(path, ": out of memory while reading it"));
  }
}

}  // namespace gpuidle::internal
