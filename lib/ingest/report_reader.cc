#include "ingest/report_reader.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/out_of_memory.h"
#include "core/status_macros.h"
#include "core/text_safety.h"
#include "ingest/byte_source.h"
#include "model/report_names.h"
#include "model/trace_names.h"
#include "rapidjson/document.h"
#include "rapidjson/error/en.h"
#include "rapidjson/memorystream.h"
#include "rapidjson/reader.h"

namespace gpuidle::internal {
namespace {

namespace keys = report_keys;
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
    GPUIDLE_RETURN_IF_ERROR(String(doc, root, keys::kSchema, &schema));
    if (!absl::StartsWith(schema, kReportSchemaPrefix)) {
      return absl::InvalidArgumentError(absl::StrCat(
          name_, ": not a gpuidle report (", keys::kSchema, " ", QuoteForMessage(schema), ")"));
    }
    if (schema != kReportSchema) {
      return absl::InvalidArgumentError(absl::StrCat(
          name_, ": ", keys::kSchema, " ", QuoteForMessage(schema), ": this gpuidle reads ",
          kReportSchema, " reports (analyse the trace again)"));
    }
    GPUIDLE_RETURN_IF_ERROR(String(doc, root, keys::kSource, &r.source));
    GPUIDLE_RETURN_IF_ERROR(Strings(doc, root, keys::kInputs, &r.inputs));
    GPUIDLE_ASSIGN_OR_RETURN(const Value* window, Object(doc, root, keys::kWindow));
    const Path at_window{&root, keys::kWindow};
    GPUIDLE_RETURN_IF_ERROR(Time(*window, at_window, keys::kStartNs, &r.window_start_ns));
    GPUIDLE_RETURN_IF_ERROR(Time(*window, at_window, keys::kEndNs, &r.window_end_ns));
    GPUIDLE_RETURN_IF_ERROR(
        InOrder(at_window, keys::kStartNs, r.window_start_ns, keys::kEndNs, r.window_end_ns));

    GPUIDLE_ASSIGN_OR_RETURN(const Value* completeness, Object(doc, root, keys::kCompleteness));
    const Path at_completeness{&root, keys::kCompleteness};
    GPUIDLE_ASSIGN_OR_RETURN(const Value* dropped,
                             Get(*completeness, at_completeness, keys::kDroppedRecords));
    if (!dropped->IsNull()) {
      if (!dropped->IsUint64()) {
        return Error({&at_completeness, keys::kDroppedRecords}, "not a count (nor null)");
      }
      r.dropped_records = dropped->GetUint64();
    }
    GPUIDLE_RETURN_IF_ERROR(Uint64(*completeness, at_completeness, keys::kZeroTimestampRecords,
                                   &r.zero_timestamp_records));
    GPUIDLE_RETURN_IF_ERROR(
        Bool(*completeness, at_completeness, keys::kRecordLimitReached, &r.record_limit_reached));

    GPUIDLE_ASSIGN_OR_RETURN(const Value* coverage,
                             Object(doc, root, keys::kCoverage, Need::kOptional));
    if (coverage != nullptr) {
      const Path at{&root, keys::kCoverage};
      Coverage& c = r.coverage.emplace();
      GPUIDLE_RETURN_IF_ERROR(Count(*coverage, at, keys::kWindows, &c.windows));
      GPUIDLE_RETURN_IF_ERROR(Duration(*coverage, at, keys::kTracedNs, &c.traced_ns));
      GPUIDLE_RETURN_IF_ERROR(Duration(*coverage, at, keys::kSpanNs, &c.span_ns));
      // What was seen and the plan (optional: reports before issue 28 lack them).
      for (const auto& [key, field] :
           {std::pair<absl::string_view, int64_t*>{keys::kTracedUntilNs, &c.traced_until_ns},
            {keys::kFirstWindowNs, &c.first_window_ns},
            {keys::kWindowNs, &c.window_ns},
            {keys::kPeriodNs, &c.period_ns}}) {
        GPUIDLE_RETURN_IF_ERROR(Duration(*coverage, at, key, field, Need::kOptional));
      }
    }
    GPUIDLE_RETURN_IF_ERROR(ServingOf(doc, root, &r));
    GPUIDLE_RETURN_IF_ERROR(Int(doc, root, keys::kVisibleDeviceCount, &r.visible_device_count));
    if (r.visible_device_count < 0) return Error({&root, keys::kVisibleDeviceCount}, "negative");
    GPUIDLE_RETURN_IF_ERROR(Ints(doc, root, keys::kUnusedDevices, &r.unused_devices));
    GPUIDLE_RETURN_IF_ERROR(VisibleDevices(doc, root, &r));
    GPUIDLE_RETURN_IF_ERROR(String(doc, root, keys::kStepSource, &r.step_source));
    // Optional: reports before it lack it.
    GPUIDLE_RETURN_IF_ERROR(String(doc, root, keys::kTracerTime, &r.tracer_time, Need::kOptional));
    // Reports before it had recorded times only.
    GPUIDLE_RETURN_IF_ERROR(
        String(doc, root, keys::kDeviceTimes, &r.device_times, Need::kOptional));
    if (r.device_times != report_values::kRecorded && r.device_times != report_values::kMadeUp) {
      return Error(Path{&root, keys::kDeviceTimes},
                   absl::StrCat("must be \"", report_values::kRecorded, "\" or \"",
                                report_values::kMadeUp, "\""));
    }
    if (r.tracer_time != report_values::kTakenOut && r.tracer_time != report_values::kAsRecorded &&
        r.tracer_time != report_values::kNotKnown) {
      return Error({&root, keys::kTracerTime},
                   absl::StrCat("not one of ", report_values::kTakenOut, ", ",
                                report_values::kAsRecorded, ", ", report_values::kNotKnown));
    }
    GPUIDLE_RETURN_IF_ERROR(Strings(doc, root, keys::kWarnings, &r.warnings));
    GPUIDLE_RETURN_IF_ERROR(Ranks(doc, root, &r));
    GPUIDLE_RETURN_IF_ERROR(
        OptionalInt(doc, root, keys::kStragglerRank, &r.straggler_rank, Need::kOptional));
    GPUIDLE_RETURN_IF_ERROR(Ints(doc, root, keys::kStragglers, &r.stragglers, Need::kOptional));
    GPUIDLE_RETURN_IF_ERROR(Clock(doc, root, &r.clock));

    GPUIDLE_ASSIGN_OR_RETURN(const Value* devices,
                             Array(doc, root, keys::kDevices, kMaxReportDevices));
    const Path at_devices{&root, keys::kDevices};
    r.devices.resize(devices->Size());
    // Every time of a device is within its window, so the windows' sum bounds every sum of
    // times over devices; the counts (steps, kernels, copies, collectives) add up on their own.
    int64_t windows_ns = 0, counts = 0;
    for (rapidjson::SizeType i = 0; i < devices->Size(); ++i) {
      const Path at_device{&at_devices, "", i};
      const DeviceReport& d = r.devices[i];
      GPUIDLE_RETURN_IF_ERROR(Device((*devices)[i], at_device, &r.devices[i]));
      GPUIDLE_RETURN_IF_ERROR(AddToSum({&at_device, keys::kWindowNs}, d.window_ns, &windows_ns,
                                       "the devices' windows"));
      for (int64_t count : {d.step_count, d.kernel_count, d.memcpy_count, d.memset_count}) {
        GPUIDLE_RETURN_IF_ERROR(AddToSum(at_device, count, &counts, "the devices' counts"));
      }
      for (const CollectiveStats& k : d.collectives) {
        GPUIDLE_RETURN_IF_ERROR(AddToSum(at_device, k.count, &counts, "the devices' counts"));
      }
    }

    GPUIDLE_RETURN_IF_ERROR(
        Uint64(doc, root, keys::kStepsNotListed, &r.steps_not_listed, Need::kOptional));
    GPUIDLE_ASSIGN_OR_RETURN(const Value* steps,
                             Array(doc, root, keys::kSteps, Report::kMaxStepRows));
    const Path at_steps{&root, keys::kSteps};
    r.steps.resize(steps->Size());
    int64_t steps_ns = 0;
    for (rapidjson::SizeType i = 0; i < steps->Size(); ++i) {
      const Path at_step{&at_steps, "", i};
      GPUIDLE_RETURN_IF_ERROR(Step((*steps)[i], at_step, &r.steps[i]));
      GPUIDLE_RETURN_IF_ERROR(AddToSum(at_step, r.steps[i].end_ns - r.steps[i].start_ns, &steps_ns,
                                       "the steps' spans"));
    }
    GPUIDLE_ASSIGN_OR_RETURN(const Value* gaps, Array(doc, root, keys::kLongestGaps));
    const Path at_gaps{&root, keys::kLongestGaps};
    r.longest_gaps.resize(gaps->Size());
    int64_t gaps_ns = 0;
    for (rapidjson::SizeType i = 0; i < gaps->Size(); ++i) {
      const Path at_gap{&at_gaps, "", i};
      GPUIDLE_RETURN_IF_ERROR(Gap((*gaps)[i], at_gap, &r.longest_gaps[i]));
      GPUIDLE_RETURN_IF_ERROR(AddToSum(at_gap,
                                       r.longest_gaps[i].end_ns - r.longest_gaps[i].start_ns,
                                       &gaps_ns, "the gaps' spans"));
    }
    GPUIDLE_ASSIGN_OR_RETURN(const Value* offenders, Array(doc, root, keys::kOffenders));
    const Path at_offenders{&root, keys::kOffenders};
    r.offenders.resize(offenders->Size());
    int64_t offenders_ns = 0;
    for (rapidjson::SizeType i = 0; i < offenders->Size(); ++i) {
      const Path at_offender{&at_offenders, "", i};
      GPUIDLE_RETURN_IF_ERROR(OffenderAt((*offenders)[i], at_offender, &r.offenders[i]));
      GPUIDLE_RETURN_IF_ERROR(AddToSum({&at_offender, keys::kIdleNs}, r.offenders[i].idle_ns,
                                       &offenders_ns, "the offenders' idle times"));
    }
    // Periodic work (optional: reports before issue 28 lack it).
    GPUIDLE_ASSIGN_OR_RETURN(const Value* periodic, Array(doc, root, keys::kPeriodicWork,
                                                          kMaxReportListRows, Need::kOptional));
    if (periodic != nullptr) {
      const Path at_periodic{&root, keys::kPeriodicWork};
      r.periodic_work.resize(periodic->Size());
      int64_t span_ns = 0, idle_ns = 0;
      for (rapidjson::SizeType i = 0; i < periodic->Size(); ++i) {
        const Path at_row{&at_periodic, "", i};
        GPUIDLE_RETURN_IF_ERROR(PeriodicWorkAt((*periodic)[i], at_row, &r.periodic_work[i]));
        GPUIDLE_RETURN_IF_ERROR(AddToSum({&at_row, keys::kSpanNs}, r.periodic_work[i].span_ns,
                                         &span_ns, "the periodic work's spans"));
        GPUIDLE_RETURN_IF_ERROR(AddToSum({&at_row, keys::kIdleNs}, r.periodic_work[i].idle_ns,
                                         &idle_ns, "the periodic work's idle times"));
      }
    }
    GPUIDLE_RETURN_IF_ERROR(VerdictField(doc, root, &r));
    GPUIDLE_ASSIGN_OR_RETURN(const Value* advice, Array(doc, root, keys::kAdvice));
    const Path at_advice{&root, keys::kAdvice};
    r.advice.resize(advice->Size());
    for (rapidjson::SizeType i = 0; i < advice->Size(); ++i) {
      GPUIDLE_RETURN_IF_ERROR(AdviceAt((*advice)[i], {&at_advice, "", i}, &r.advice[i]));
    }
    FillShareOfSteadyState(&r);
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

  // A serving process's requests (optional: only a process that marked requests has them).
  absl::Status ServingOf(const Value& doc, const Path& root, Report* r) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* v, Object(doc, root, keys::kServing, Need::kOptional));
    if (v == nullptr) return absl::OkStatus();
    const Path at{&root, keys::kServing};
    Serving& s = r->serving.emplace();
    GPUIDLE_RETURN_IF_ERROR(Count(*v, at, keys::kRequests, &s.requests));
    GPUIDLE_RETURN_IF_ERROR(Count(*v, at, keys::kRunKnown, &s.run_known));
    GPUIDLE_RETURN_IF_ERROR(Count(*v, at, keys::kInFlightMax, &s.in_flight_max));
    for (const auto& [key, out] :
         {std::pair<absl::string_view, double*>{keys::kRequestsPerS, &s.requests_per_s},
          {keys::kInFlightMean, &s.in_flight_mean}}) {
      GPUIDLE_RETURN_IF_ERROR(Double(*v, at, key, out));
      if (!(*out >= 0)) return Error({&at, key}, "not a number of at least 0");
    }
    GPUIDLE_ASSIGN_OR_RETURN(const Value* batch, Get(*v, at, keys::kBatchMean, Need::kOptional));
    if (batch != nullptr) {
      if (!batch->IsNumber() || !(batch->GetDouble() >= 0)) {
        return Error({&at, keys::kBatchMean}, "not a number of at least 0");
      }
      s.batch_mean = batch->GetDouble();
    }
    for (const auto& [key, p] :
         {std::pair<absl::string_view, Serving::Percentiles*>{keys::kLatency, &s.latency},
          {keys::kQueue, &s.queue},
          {keys::kRun, &s.run}}) {
      GPUIDLE_ASSIGN_OR_RETURN(const Value* o, Object(*v, at, key));
      const Path here{&at, key};
      GPUIDLE_RETURN_IF_ERROR(Duration(*o, here, keys::kP50Ns, &p->p50_ns));
      GPUIDLE_RETURN_IF_ERROR(Duration(*o, here, keys::kP90Ns, &p->p90_ns));
      GPUIDLE_RETURN_IF_ERROR(Duration(*o, here, keys::kP99Ns, &p->p99_ns));
    }
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
    GPUIDLE_RETURN_IF_ERROR(String(obj, at, keys::kSubcause, &subcause));
    const std::optional<Subcause> s = ParseSubcause(subcause);
    if (!s) {
      return Error({&at, keys::kSubcause}, absl::StrCat("unknown ", QuoteForMessage(subcause)));
    }
    GPUIDLE_RETURN_IF_ERROR(String(obj, at, keys::kCause, &cause));
    if (cause != CauseName(CauseOf(*s))) {
      return Error(
          {&at, keys::kCause},
          absl::StrCat(QuoteForMessage(cause), " is not the cause of ", QuoteForMessage(subcause)));
    }
    *out = *s;
    return absl::OkStatus();
  }

  // idle_by_subcause: every subcause's ns (idle_by_cause is their sum, not read). Not negative,
  // and their sum fits (the writers add them up). sync_bound.allocator,
  // sync_bound.other_process and launch_bound.requests_waiting came later within
  // gpuidle.report/2: 0 where a report has none.
  absl::Status Subcauses(const Value& obj, const Path& at, IdleBreakdown* idle) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* by, Object(obj, at, keys::kIdleBySubcause));
    const Path here{&at, keys::kIdleBySubcause};
    int64_t total = 0;
    for (int s = 0; s < kNumSubcauses; ++s) {
      const auto sub = static_cast<Subcause>(s);
      const std::string name = QualifiedSubcauseName(sub);
      const bool later = sub == Subcause::kAllocator || sub == Subcause::kOtherProcess ||
                         sub == Subcause::kRequestsWaiting;
      const Need need = later ? Need::kOptional : Need::kRequired;
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
    GPUIDLE_ASSIGN_OR_RETURN(const Value* parts, Array(phase, at, keys::kParts));
    const Path here{&at, keys::kParts};
    for (rapidjson::SizeType i = 0; i < parts->Size(); ++i) {
      const Value& v = (*parts)[i];
      const Path at_part{&here, "", i};
      GPUIDLE_RETURN_IF_ERROR(CheckObject(v, at_part));
      OneOffTime o;
      o.phase = p;
      std::string kind;
      GPUIDLE_RETURN_IF_ERROR(String(v, at_part, keys::kKind, &kind));
      const std::optional<OneOffKind> k = ParseOneOffKind(kind);
      if (!k) {
        return Error({&at_part, keys::kKind}, absl::StrCat("unknown ", QuoteForMessage(kind)));
      }
      o.kind = *k;
      GPUIDLE_RETURN_IF_ERROR(Duration(v, at_part, keys::kNs, &o.ns));
      GPUIDLE_RETURN_IF_ERROR(AddToSum({&at_part, keys::kNs}, o.ns, &sum, "the parts"));
      GPUIDLE_RETURN_IF_ERROR(Count(v, at_part, keys::kCount, &o.count));
      GPUIDLE_RETURN_IF_ERROR(String(v, at_part, keys::kEvidence, &o.evidence));
      d->one_off.push_back(std::move(o));
    }
    return absl::OkStatus();
  }

  // phases: the window's ends, each phase's time and its one-off parts. The spans must agree with
  // the device's steady_start_ns and steady_end_ns.
  absl::Status Phases(const Value& obj, const Path& at, DeviceReport* d) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* phases, Object(obj, at, keys::kPhases));
    const Path here{&at, keys::kPhases};
    std::array<int64_t, kNumPhases> ns{};
    std::array<int64_t, kNumPhases> start{};
    std::array<int64_t, kNumPhases> end{};
    for (int i = 0; i < kNumPhases; ++i) {
      const Phase p = static_cast<Phase>(i);
      const absl::string_view key = PhaseName(p);
      GPUIDLE_ASSIGN_OR_RETURN(const Value* phase, Object(*phases, here, key));
      const Path at_phase{&here, key};
      GPUIDLE_RETURN_IF_ERROR(Time(*phase, at_phase, keys::kStartNs, &start[i]));
      GPUIDLE_RETURN_IF_ERROR(Time(*phase, at_phase, keys::kEndNs, &end[i]));
      GPUIDLE_RETURN_IF_ERROR(InOrder(at_phase, keys::kStartNs, start[i], keys::kEndNs, end[i]));
      if (end[i] - start[i] > kMaxDurationNs) return Error(at_phase, "longer than 2^52 ns");
      GPUIDLE_RETURN_IF_ERROR(Duration(*phase, at_phase, keys::kNs, &ns[i]));
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
        must_be(kStart, keys::kEndNs, end[kStart], d->steady_start_ns, keys::kSteadyStartNs));
    GPUIDLE_RETURN_IF_ERROR(
        must_be(kSteady, keys::kStartNs, start[kSteady], d->steady_start_ns, keys::kSteadyStartNs));
    GPUIDLE_RETURN_IF_ERROR(
        must_be(kSteady, keys::kEndNs, end[kSteady], d->steady_end_ns, keys::kSteadyEndNs));
    GPUIDLE_RETURN_IF_ERROR(
        must_be(kWind, keys::kStartNs, start[kWind], d->steady_end_ns, keys::kSteadyEndNs));
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
    GPUIDLE_ASSIGN_OR_RETURN(
        const Value* list, Array(obj, at, keys::kCollectives, kMaxReportListRows, Need::kOptional));
    if (list == nullptr) return absl::OkStatus();
    const Path here{&at, keys::kCollectives};
    d->collectives.resize(list->Size());
    int64_t kinds_ns = 0;
    // A kind is its group and op, listed once (the merge looks kinds up by them).
    absl::flat_hash_set<std::pair<absl::string_view, absl::string_view>> kinds;
    for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
      const Value& v = (*list)[i];
      const Path at_kind{&here, "", i};
      GPUIDLE_RETURN_IF_ERROR(CheckObject(v, at_kind));
      CollectiveStats& c = d->collectives[i];
      GPUIDLE_RETURN_IF_ERROR(String(v, at_kind, keys::kGroup, &c.group));
      GPUIDLE_RETURN_IF_ERROR(String(v, at_kind, keys::kOp, &c.op));
      if (!kinds.emplace(c.group, c.op).second) {
        return Error(at_kind, absl::StrCat("the kind ", QuoteForMessage(c.op), " of group ",
                                           QuoteForMessage(c.group), " is listed twice"));
      }
      GPUIDLE_RETURN_IF_ERROR(Count(v, at_kind, keys::kCount, &c.count));
      GPUIDLE_RETURN_IF_ERROR(Duration(v, at_kind, keys::kNs, &c.ns));
      GPUIDLE_RETURN_IF_ERROR(Duration(v, at_kind, keys::kExposedNs, &c.exposed_ns));
      GPUIDLE_RETURN_IF_ERROR(Within(at_kind, keys::kExposedNs, c.exposed_ns, keys::kNs, c.ns));
      GPUIDLE_RETURN_IF_ERROR(OptionalInt64(v, at_kind, keys::kBytes, &c.bytes, Need::kOptional));
      if (c.bytes.value_or(0) < 0) return Error({&at_kind, keys::kBytes}, "negative");
      GPUIDLE_RETURN_IF_ERROR(
          OptionalInt64(v, at_kind, keys::kWaitNs, &c.wait_ns, Need::kOptional));
      GPUIDLE_RETURN_IF_ERROR(
          Within(at_kind, keys::kWaitNs, c.wait_ns.value_or(0), keys::kNs, c.ns));
      if (c.wait_ns.value_or(0) < 0) return Error({&at_kind, keys::kWaitNs}, "negative");
      GPUIDLE_RETURN_IF_ERROR(
          AddToSum({&at_kind, keys::kNs}, c.ns, &kinds_ns, "the collectives' times"));
    }
    return absl::OkStatus();
  }

  // collective_timings: five columns of one length (docs/REPORT_SCHEMA.md).
  absl::Status CollectiveTimings(const Value& obj, const Path& at, DeviceReport* d) const {
    GPUIDLE_RETURN_IF_ERROR(
        Int64(obj, at, keys::kCollectivesNotListed, &d->collectives_not_listed, Need::kOptional));
    if (d->collectives_not_listed < 0) return Error({&at, keys::kCollectivesNotListed}, "negative");
    GPUIDLE_ASSIGN_OR_RETURN(const Value* table,
                             Object(obj, at, keys::kCollectiveTimings, Need::kOptional));
    if (table == nullptr) return absl::OkStatus();
    const Path here{&at, keys::kCollectiveTimings};
    constexpr std::array<absl::string_view, 5> kColumns = {keys::kStartNs, keys::kDurationNs,
                                                           keys::kSeq, keys::kBytes, keys::kKind};
    std::array<const Value*, 5> columns{};
    for (size_t c = 0; c < kColumns.size(); ++c) {
      GPUIDLE_ASSIGN_OR_RETURN(columns[c],
                               Array(*table, here, kColumns[c], DeviceReport::kMaxCollectiveRows));
      if (columns[c]->Size() != columns[0]->Size()) {
        return Error({&here, kColumns[c]}, absl::StrCat(columns[c]->Size(), " rows, ", kColumns[0],
                                                        " has ", columns[0]->Size()));
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
      return Error({&at, keys::kWindowNs},
                   absl::StrCat(d.window_ns, " is not the phases' sum (", phases, ")"));
    }
    const int64_t steady = d.busy_ns + d.idle_ns + d.SteadyOneOffNs();
    if (steady != d.PhaseNs(Phase::kSteady)) {
      return Error(
          {&at, keys::kBusyNs},
          absl::StrCat(keys::kBusyNs, " + ", keys::kIdleNs, " + the steady state's one-off parts (",
                       steady, ") is not the steady state (", d.PhaseNs(Phase::kSteady), ")"));
    }
    return absl::OkStatus();
  }

  absl::Status Device(const Value& v, const Path& at, DeviceReport* d) const {
    GPUIDLE_RETURN_IF_ERROR(CheckObject(v, at));
    GPUIDLE_RETURN_IF_ERROR(OptionalInt(v, at, keys::kRank, &d->rank));
    GPUIDLE_RETURN_IF_ERROR(Int(v, at, keys::kDevice, &d->device));
    GPUIDLE_RETURN_IF_ERROR(String(v, at, keys::kName, &d->name));
    GPUIDLE_RETURN_IF_ERROR(Duration(v, at, keys::kWindowNs, &d->window_ns));
    GPUIDLE_RETURN_IF_ERROR(Time(v, at, keys::kSteadyStartNs, &d->steady_start_ns));
    GPUIDLE_RETURN_IF_ERROR(Time(v, at, keys::kSteadyEndNs, &d->steady_end_ns));
    GPUIDLE_RETURN_IF_ERROR(InOrder(at, keys::kSteadyStartNs, d->steady_start_ns,
                                    keys::kSteadyEndNs, d->steady_end_ns));
    GPUIDLE_RETURN_IF_ERROR(Duration(v, at, keys::kBusyNs, &d->busy_ns));
    GPUIDLE_RETURN_IF_ERROR(Duration(v, at, keys::kIdleNs, &d->idle_ns));
    GPUIDLE_RETURN_IF_ERROR(Subcauses(v, at, &d->idle));
    if (d->idle.TotalNs() != d->idle_ns) {
      return Error({&at, keys::kIdleBySubcause},
                   absl::StrCat("adds up to ", d->idle.TotalNs(), ", not ", keys::kIdleNs, " (",
                                d->idle_ns, ")"));
    }
    GPUIDLE_RETURN_IF_ERROR(Phases(v, at, d));
    GPUIDLE_RETURN_IF_ERROR(Conserved(at, *d));
    GPUIDLE_RETURN_IF_ERROR(Count(v, at, keys::kStepCount, &d->step_count, Need::kOptional));
    GPUIDLE_RETURN_IF_ERROR(Duration(v, at, keys::kTracerNs, &d->tracer_ns, Need::kOptional));
    GPUIDLE_RETURN_IF_ERROR(Count(v, at, keys::kKernelCount, &d->kernel_count));
    GPUIDLE_RETURN_IF_ERROR(Count(v, at, keys::kMemcpyCount, &d->memcpy_count));
    GPUIDLE_RETURN_IF_ERROR(Count(v, at, keys::kMemsetCount, &d->memset_count));
    GPUIDLE_RETURN_IF_ERROR(Duration(v, at, keys::kCommNs, &d->comm_ns));
    GPUIDLE_RETURN_IF_ERROR(Within(at, keys::kCommNs, d->comm_ns, keys::kBusyNs, d->busy_ns));
    GPUIDLE_RETURN_IF_ERROR(Duration(v, at, keys::kExposedCommNs, &d->exposed_comm_ns));
    GPUIDLE_RETURN_IF_ERROR(
        Within(at, keys::kExposedCommNs, d->exposed_comm_ns, keys::kCommNs, d->comm_ns));
    GPUIDLE_RETURN_IF_ERROR(OptionalInt64(v, at, keys::kCommWaitNs, &d->comm_wait_ns));
    if (d->comm_wait_ns.value_or(0) < 0) return Error({&at, keys::kCommWaitNs}, "negative");
    GPUIDLE_RETURN_IF_ERROR(
        Within(at, keys::kCommWaitNs, d->comm_wait_ns.value_or(0), keys::kCommNs, d->comm_ns));
    // A serving process's demand: the steady state's time with a request in flight, and the
    // busy time within it.
    GPUIDLE_RETURN_IF_ERROR(OptionalInt64(v, at, keys::kDemandNs, &d->demand_ns, Need::kOptional));
    if (d->demand_ns.has_value()) {
      if (*d->demand_ns < 0) return Error({&at, keys::kDemandNs}, "negative");
      GPUIDLE_RETURN_IF_ERROR(Duration(v, at, keys::kDemandBusyNs, &d->demand_busy_ns));
      GPUIDLE_RETURN_IF_ERROR(Within(at, keys::kDemandNs, *d->demand_ns, keys::kSteadyNs,
                                     d->steady_end_ns - d->steady_start_ns));
      GPUIDLE_RETURN_IF_ERROR(
          Within(at, keys::kDemandBusyNs, d->demand_busy_ns, keys::kDemandNs, *d->demand_ns));
    }
    GPUIDLE_RETURN_IF_ERROR(CopyTotalsOf(v, at, d));
    GPUIDLE_RETURN_IF_ERROR(GraphReplaysOf(v, at, d));
    GPUIDLE_RETURN_IF_ERROR(Collectives(v, at, d));
    GPUIDLE_RETURN_IF_ERROR(CollectiveTimings(v, at, d));
    GPUIDLE_RETURN_IF_ERROR(GpuMetricsOf(v, at, d));
    return TimelineOf(v, at, d);
  }

  // timeline (optional: older reports lack it): columns of one length, at most
  // TimelineSummary::kBins, each cell within [0, bin_ns].
  absl::Status TimelineOf(const Value& obj, const Path& at, DeviceReport* d) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* t, Object(obj, at, keys::kTimeline, Need::kOptional));
    if (t == nullptr) return absl::OkStatus();
    const Path here{&at, keys::kTimeline};
    TimelineSummary& out = d->timeline;
    GPUIDLE_RETURN_IF_ERROR(Time(*t, here, keys::kStartNs, &out.start_ns));
    GPUIDLE_RETURN_IF_ERROR(Int64(*t, here, keys::kBinNs, &out.bin_ns));
    if (out.bin_ns <= 0 || out.bin_ns > kMaxDurationNs) {
      return Error({&here, keys::kBinNs}, "not positive or beyond 2^52 ns");
    }
    GPUIDLE_ASSIGN_OR_RETURN(const Value* idle, Object(*t, here, keys::kIdleNs));
    const Path at_idle{&here, keys::kIdleNs};
    // busy_ns, one_off_ns, then the causes' columns.
    std::array<const Value*, 2 + kNumCauses> columns{};
    std::array<Path, 2 + kNumCauses> paths{};
    const auto column = [&](size_t c, const Value& from, const Path& parent,
                            absl::string_view key) -> absl::Status {
      GPUIDLE_ASSIGN_OR_RETURN(columns[c], Array(from, parent, key, TimelineSummary::kBins));
      paths[c] = Path{&parent, key};
      if (columns[c]->Size() != columns[0]->Size()) {
        return Error(paths[c], absl::StrCat(columns[c]->Size(), " bins, ", keys::kBusyNs, " has ",
                                            columns[0]->Size()));
      }
      return absl::OkStatus();
    };
    GPUIDLE_RETURN_IF_ERROR(column(0, *t, here, keys::kBusyNs));
    GPUIDLE_RETURN_IF_ERROR(column(1, *t, here, keys::kOneOffNs));
    for (int c = 0; c < kNumCauses; ++c) {
      GPUIDLE_RETURN_IF_ERROR(
          column(2 + static_cast<size_t>(c), *idle, at_idle, CauseName(static_cast<Cause>(c))));
    }
    if (out.bin_ns * static_cast<int64_t>(columns[0]->Size()) > kMaxDurationNs) {
      return Error({&here, keys::kBinNs}, "the bins reach beyond 2^52 ns");
    }
    out.bins.resize(columns[0]->Size());
    for (size_t c = 0; c < columns.size(); ++c) {
      for (rapidjson::SizeType i = 0; i < columns[c]->Size(); ++i) {
        const Value& cell = (*columns[c])[i];
        if (!cell.IsInt64() || cell.GetInt64() < 0 || cell.GetInt64() > out.bin_ns) {
          return Error({&paths[c], "", i},
                       absl::StrCat("not an integer within [0, ", keys::kBinNs, "]"));
        }
        TimelineSummary::Bin& b = out.bins[i];
        int64_t& cell_out = c == 0 ? b.busy_ns : c == 1 ? b.one_off_ns : b.idle_ns[c - 2];
        cell_out = cell.GetInt64();
      }
    }
    GPUIDLE_RETURN_IF_ERROR(InFlightOf(*t, here, &out));
    return TimelineGpuOf(*t, here, &out);
  }

  // timeline.in_flight_ns (optional: only a serving process has it): as long as the bins'
  // columns; request nanoseconds, whose total is bounded like the report's other sums, so that
  // coarsening the bins (a merge of ranks) cannot overflow.
  absl::Status InFlightOf(const Value& obj, const Path& at, TimelineSummary* out) const {
    GPUIDLE_ASSIGN_OR_RETURN(
        const Value* c, Array(obj, at, keys::kInFlightNs, TimelineSummary::kBins, Need::kOptional));
    if (c == nullptr) return absl::OkStatus();
    const Path here{&at, keys::kInFlightNs};
    if (c->Size() != out->bins.size()) {
      return Error(here,
                   absl::StrCat(c->Size(), " bins, ", keys::kBusyNs, " has ", out->bins.size()));
    }
    out->in_flight_ns.resize(out->bins.size());
    int64_t total = 0;
    for (rapidjson::SizeType i = 0; i < c->Size(); ++i) {
      const Value& cell = (*c)[i];
      if (!cell.IsInt64() || cell.GetInt64() < 0 || cell.GetInt64() > kMaxReportSum) {
        return Error({&here, "", i},
                     absl::StrCat("not an integer within [0, ", kMaxReportSum, "]"));
      }
      total += cell.GetInt64();  // both at most kMaxReportSum: no overflow
      if (total > kMaxReportSum) return Error(here, "the bins' sum is beyond 2^62");
      out->in_flight_ns[i] = cell.GetInt64();
    }
    return absl::OkStatus();
  }

  // timeline.gpu (optional: captures without readings lack it): columns as long as the bins',
  // each optional.
  absl::Status TimelineGpuOf(const Value& obj, const Path& at, TimelineSummary* out) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* g, Object(obj, at, keys::kGpu, Need::kOptional));
    if (g == nullptr) return absl::OkStatus();
    const Path here{&at, keys::kGpu};
    using GpuBin = TimelineSummary::GpuBin;
    out->gpu.assign(out->bins.size(), GpuBin{});
    GPUIDLE_RETURN_IF_ERROR(U32(*g, here, keys::kSmClockMaxMhz, &out->sm_clock_max_mhz));
    GPUIDLE_RETURN_IF_ERROR(U32(*g, here, keys::kPowerLimitMw, &out->power_limit_mw));
    // Each cell through `set`, which says what it takes ("" if the cell is fine).
    const auto column = [&](absl::string_view key, auto set) -> absl::Status {
      GPUIDLE_ASSIGN_OR_RETURN(const Value* c,
                               Array(*g, here, key, TimelineSummary::kBins, Need::kOptional));
      if (c == nullptr) return absl::OkStatus();
      const Path at_column{&here, key};
      if (c->Size() != out->gpu.size()) {
        return Error(at_column,
                     absl::StrCat(c->Size(), " bins, the timeline has ", out->gpu.size()));
      }
      for (rapidjson::SizeType i = 0; i < c->Size(); ++i) {
        const std::string wrong = set((*c)[i], &out->gpu[i]);
        if (!wrong.empty()) return Error({&at_column, "", i}, wrong);
      }
      return absl::OkStatus();
    };
    const auto integer = [](int64_t max, auto field) {
      return [max, field](const Value& v, GpuBin* b) -> std::string {
        if (!v.IsInt64() || v.GetInt64() < 0 || v.GetInt64() > max) {
          return absl::StrCat("not an integer within [0, ", max, "]");
        }
        b->*field = static_cast<std::remove_reference_t<decltype(b->*field)>>(v.GetInt64());
        return "";
      };
    };
    const auto percent = [](double GpuBin::*field) {
      return [field](const Value& v, GpuBin* b) -> std::string {
        if (!v.IsNumber() || !(v.GetDouble() >= -1)) return "not a number of at least -1";
        b->*field = v.GetDouble() < 0 ? -1 : v.GetDouble();
        return "";
      };
    };
    GPUIDLE_RETURN_IF_ERROR(column(keys::kSamples, integer(kMaxReportSum, &GpuBin::samples)));
    GPUIDLE_RETURN_IF_ERROR(column(keys::kSmClockMhz, integer(UINT32_MAX, &GpuBin::sm_clock_mhz)));
    GPUIDLE_RETURN_IF_ERROR(column(keys::kPowerMw, integer(UINT32_MAX, &GpuBin::power_mw)));
    GPUIDLE_RETURN_IF_ERROR(column(keys::kPmNs, integer(out->bin_ns, &GpuBin::pm_ns)));
    GPUIDLE_RETURN_IF_ERROR(column(keys::kSmActivePct, percent(&GpuBin::sm_active_pct)));
    GPUIDLE_RETURN_IF_ERROR(column(keys::kTensorActivePct, percent(&GpuBin::tensor_active_pct)));
    return column(keys::kDramPct, percent(&GpuBin::dram_pct));
  }

  // A 32-bit reading of NVML's (a clock, a power, a temperature).
  absl::Status U32(const Value& obj, const Path& at, absl::string_view key, uint32_t* out) const {
    int64_t v = 0;
    GPUIDLE_RETURN_IF_ERROR(
        UpTo(obj, at, key, &v, UINT32_MAX, "a 32-bit reading", Need::kRequired));
    *out = static_cast<uint32_t>(v);
    return absl::OkStatus();
  }

  // A PM figure: a percentage, absent where not measured (-1 in the model).
  absl::Status Percent(const Value& obj, const Path& at, absl::string_view key, double* out) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* v, Get(obj, at, key, Need::kOptional));
    if (v == nullptr) return absl::OkStatus();
    if (!v->IsNumber() || !(v->GetDouble() >= 0)) return Error({&at, key}, "not a percentage");
    *out = v->GetDouble();
    return absl::OkStatus();
  }

  // steps[].gpu (optional: steps without readings lack it).
  absl::Status StepGpuOf(const Value& obj, const Path& at, StepReport* s) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* g, Object(obj, at, keys::kGpu, Need::kOptional));
    if (g == nullptr) return absl::OkStatus();
    const Path here{&at, keys::kGpu};
    StepReport::Gpu& out = s->gpu.emplace();
    GPUIDLE_RETURN_IF_ERROR(Count(*g, here, keys::kSamples, &out.samples));
    GPUIDLE_RETURN_IF_ERROR(U32(*g, here, keys::kSmClockMedianMhz, &out.sm_clock_median_mhz));
    GPUIDLE_RETURN_IF_ERROR(U32(*g, here, keys::kSmClockMaxMhz, &out.sm_clock_max_mhz));
    GPUIDLE_RETURN_IF_ERROR(U32(*g, here, keys::kPowerMedianMw, &out.power_median_mw));
    GPUIDLE_RETURN_IF_ERROR(U32(*g, here, keys::kPowerLimitMw, &out.power_limit_mw));
    GPUIDLE_RETURN_IF_ERROR(Share(*g, here, keys::kSlowClockShare, &out.slow_clock_share));
    GPUIDLE_RETURN_IF_ERROR(Percent(*g, here, keys::kSmActivePct, &out.sm_active_pct));
    GPUIDLE_RETURN_IF_ERROR(Percent(*g, here, keys::kTensorActivePct, &out.tensor_active_pct));
    return Percent(*g, here, keys::kDramPct, &out.dram_pct);
  }

  // h2d_copies (optional: reports before it lack it).
  absl::Status CopyTotalsOf(const Value& obj, const Path& at, DeviceReport* d) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* copies,
                             Object(obj, at, keys::kH2dCopies, Need::kOptional));
    if (copies == nullptr) return absl::OkStatus();
    const Path here{&at, keys::kH2dCopies};
    for (auto [key, totals] :
         {std::pair{keys::kPageable, &d->h2d_pageable}, std::pair{keys::kPinned, &d->h2d_pinned}}) {
      GPUIDLE_ASSIGN_OR_RETURN(const Value* v, Object(*copies, here, key));
      const Path at_kind{&here, key};
      GPUIDLE_RETURN_IF_ERROR(Count(*v, at_kind, keys::kCount, &totals->count));
      GPUIDLE_RETURN_IF_ERROR(Count(*v, at_kind, keys::kBytes, &totals->bytes));
      GPUIDLE_RETURN_IF_ERROR(Duration(*v, at_kind, keys::kNs, &totals->ns));
    }
    return absl::OkStatus();
  }

  // graph_replays (optional: reports before it lack it).
  // gpu_metrics (optional: reports without NVML readings, and older ones, lack it).
  absl::Status GpuMetricsOf(const Value& obj, const Path& at, DeviceReport* d) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* g, Object(obj, at, keys::kGpuMetrics, Need::kOptional));
    if (g == nullptr) return absl::OkStatus();
    const Path here{&at, keys::kGpuMetrics};
    GpuMetrics& m = d->gpu_metrics.emplace();
    GPUIDLE_RETURN_IF_ERROR(Count(*g, here, keys::kSamples, &m.samples));
    GPUIDLE_RETURN_IF_ERROR(Count(*g, here, keys::kBusySamples, &m.busy_samples));
    GPUIDLE_RETURN_IF_ERROR(Count(*g, here, keys::kIdleSamples, &m.idle_samples));
    if (m.busy_samples + m.idle_samples != m.samples) {
      return Error(here, "busy_samples and idle_samples do not add up to samples");
    }
    GPUIDLE_RETURN_IF_ERROR(Duration(*g, here, keys::kPeriodNs, &m.period_ns));
    const auto u32 = [&](absl::string_view key, uint32_t* out) -> absl::Status {
      int64_t v = 0;
      GPUIDLE_RETURN_IF_ERROR(
          UpTo(*g, here, key, &v, UINT32_MAX, "a 32-bit reading", Need::kRequired));
      *out = static_cast<uint32_t>(v);
      return absl::OkStatus();
    };
    const auto u64 = [&](absl::string_view key, uint64_t* out) -> absl::Status {
      int64_t v = 0;
      GPUIDLE_RETURN_IF_ERROR(Count(*g, here, key, &v));
      *out = static_cast<uint64_t>(v);
      return absl::OkStatus();
    };
    GPUIDLE_RETURN_IF_ERROR(u32(keys::kSmClockMaxMhz, &m.sm_clock_max_mhz));
    GPUIDLE_RETURN_IF_ERROR(u32(keys::kSmClockMedianMhz, &m.sm_clock_median_mhz));
    GPUIDLE_RETURN_IF_ERROR(Share(*g, here, keys::kSlowClockShare, &m.slow_clock_share));
    GPUIDLE_RETURN_IF_ERROR(String(*g, here, keys::kSlowClockReason, &m.slow_clock_reason));
    GPUIDLE_RETURN_IF_ERROR(u32(keys::kPowerMedianMw, &m.power_median_mw));
    GPUIDLE_RETURN_IF_ERROR(u32(keys::kPowerLimitMw, &m.power_limit_mw));
    GPUIDLE_RETURN_IF_ERROR(u32(keys::kTemperatureMaxC, &m.temperature_max_c));
    GPUIDLE_RETURN_IF_ERROR(u32(keys::kPcieGeneration, &m.pcie_generation));
    GPUIDLE_RETURN_IF_ERROR(u32(keys::kPcieGenerationMax, &m.pcie_generation_max));
    GPUIDLE_RETURN_IF_ERROR(u32(keys::kPcieWidth, &m.pcie_width));
    GPUIDLE_RETURN_IF_ERROR(u32(keys::kPcieWidthMax, &m.pcie_width_max));
    GPUIDLE_RETURN_IF_ERROR(u64(keys::kPcieReplays, &m.pcie_replays));
    GPUIDLE_RETURN_IF_ERROR(u64(keys::kMemoryUsedMaxBytes, &m.memory_used_max_bytes));
    GPUIDLE_RETURN_IF_ERROR(u64(keys::kMemoryTotalBytes, &m.memory_total_bytes));
    GPUIDLE_ASSIGN_OR_RETURN(const Value* others, Array(*g, here, keys::kOtherProcesses));
    const Path at_others{&here, keys::kOtherProcesses};
    for (rapidjson::SizeType i = 0; i < others->Size(); ++i) {
      const Value& v = (*others)[i];
      const Path row{&at_others, "", i};
      GPUIDLE_RETURN_IF_ERROR(CheckObject(v, row));
      GpuMetrics::OtherProcess& o = m.other_processes.emplace_back();
      GPUIDLE_RETURN_IF_ERROR(Count(v, row, keys::kPid, &o.pid));
      int64_t memory = 0;
      GPUIDLE_RETURN_IF_ERROR(Count(v, row, keys::kMemoryBytes, &memory));
      o.memory_bytes = static_cast<uint64_t>(memory);
      GPUIDLE_RETURN_IF_ERROR(UpTo(v, row, keys::kIdleSamplesBusy, &o.idle_samples_busy,
                                   m.idle_samples, "at most idle_samples", Need::kRequired));
      // Later within gpuidle.report/2: 0 where a report has none.
      GPUIDLE_RETURN_IF_ERROR(UpTo(v, row, keys::kBusySamplesBusy, &o.busy_samples_busy,
                                   m.busy_samples, "at most busy_samples", Need::kOptional));
    }
    GPUIDLE_ASSIGN_OR_RETURN(const Value* findings, Array(*g, here, keys::kFindings));
    const Path at_findings{&here, keys::kFindings};
    for (rapidjson::SizeType i = 0; i < findings->Size(); ++i) {
      const Value& v = (*findings)[i];
      const Path row{&at_findings, "", i};
      GPUIDLE_RETURN_IF_ERROR(CheckObject(v, row));
      GpuMetrics::Finding& f = m.findings.emplace_back();
      GPUIDLE_RETURN_IF_ERROR(String(v, row, keys::kKind, &f.kind));
      GPUIDLE_RETURN_IF_ERROR(String(v, row, keys::kWhat, &f.text));
      GPUIDLE_RETURN_IF_ERROR(String(v, row, keys::kFix, &f.fix));
    }
    GPUIDLE_RETURN_IF_ERROR(
        String(*g, here, keys::kThroughputUnavailable, &m.throughput_unavailable, Need::kOptional));
    return ThroughputOf(*g, here, &m);
  }

  // gpu_metrics.throughput (optional); a figure not measured is absent.
  absl::Status ThroughputOf(const Value& g, const Path& at, GpuMetrics* m) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* v, Object(g, at, keys::kThroughput, Need::kOptional));
    if (v == nullptr) return absl::OkStatus();
    const Path here{&at, keys::kThroughput};
    GpuMetrics::Throughput& t = m->throughput.emplace();
    // Reports before the range profiler's counters were read had PM samples only.
    GPUIDLE_RETURN_IF_ERROR(String(*v, here, keys::kSource, &t.source, Need::kOptional));
    if (t.source != kThroughputSourcePmSampling && t.source != kThroughputSourceRangeProfiler) {
      return Error(Path{&here, keys::kSource},
                   absl::StrCat("must be \"", kThroughputSourcePmSampling, "\" or \"",
                                kThroughputSourceRangeProfiler, "\""));
    }
    GPUIDLE_RETURN_IF_ERROR(Count(*v, here, keys::kSamples, &t.samples));
    GPUIDLE_RETURN_IF_ERROR(UpTo(*v, here, keys::kBusySamples, &t.busy_samples, t.samples,
                                 "at most samples", Need::kRequired));
    GPUIDLE_RETURN_IF_ERROR(Duration(*v, here, keys::kPeriodNs, &t.period_ns));
    GPUIDLE_RETURN_IF_ERROR(Share(*v, here, keys::kKernelTimeShare, &t.kernel_time_share));
    const auto figure = [&](absl::string_view key, double max, double* out) -> absl::Status {
      GPUIDLE_ASSIGN_OR_RETURN(const Value* f, Get(*v, here, key, Need::kOptional));
      if (f == nullptr) return absl::OkStatus();
      if (!f->IsNumber() || f->GetDouble() < 0 || f->GetDouble() > max) {
        return Error(Path{&here, key}, absl::StrCat("must be a number from 0 to ", max));
      }
      *out = f->GetDouble();
      return absl::OkStatus();
    };
    constexpr double kPct = 100, kBytesPerS = 1e15;
    GPUIDLE_RETURN_IF_ERROR(figure(keys::kSmActivePct, kPct, &t.sm_active_pct));
    GPUIDLE_RETURN_IF_ERROR(figure(keys::kTensorActivePct, kPct, &t.tensor_active_pct));
    GPUIDLE_RETURN_IF_ERROR(figure(keys::kDramPct, kPct, &t.dram_pct));
    GPUIDLE_RETURN_IF_ERROR(figure(keys::kPcieReadBytesPerS, kBytesPerS, &t.pcie_read_bytes_per_s));
    GPUIDLE_RETURN_IF_ERROR(
        figure(keys::kPcieWriteBytesPerS, kBytesPerS, &t.pcie_write_bytes_per_s));
    GPUIDLE_RETURN_IF_ERROR(
        figure(keys::kNvlinkReadBytesPerS, kBytesPerS, &t.nvlink_read_bytes_per_s));
    GPUIDLE_RETURN_IF_ERROR(
        figure(keys::kNvlinkWriteBytesPerS, kBytesPerS, &t.nvlink_write_bytes_per_s));
    return absl::OkStatus();
  }

  absl::Status GraphReplaysOf(const Value& obj, const Path& at, DeviceReport* d) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* g, Object(obj, at, keys::kGraphReplays, Need::kOptional));
    if (g == nullptr) return absl::OkStatus();
    const Path here{&at, keys::kGraphReplays};
    GraphReplays& out = d->graph_replays;
    GPUIDLE_RETURN_IF_ERROR(Count(*g, here, keys::kLaunches, &out.launches));
    GPUIDLE_RETURN_IF_ERROR(Count(*g, here, keys::kKernels, &out.kernels));
    GPUIDLE_RETURN_IF_ERROR(Count(*g, here, keys::kKernelsAlone, &out.kernels_alone));
    if (out.launches > out.kernels) return Error(here, "more launches than kernels");
    return absl::OkStatus();
  }

  absl::Status Step(const Value& v, const Path& at, StepReport* s) const {
    GPUIDLE_RETURN_IF_ERROR(CheckObject(v, at));
    GPUIDLE_RETURN_IF_ERROR(OptionalInt(v, at, keys::kRank, &s->rank));
    GPUIDLE_RETURN_IF_ERROR(Int(v, at, keys::kDevice, &s->device));
    GPUIDLE_RETURN_IF_ERROR(String(v, at, keys::kName, &s->name));
    GPUIDLE_RETURN_IF_ERROR(Time(v, at, keys::kStartNs, &s->start_ns));
    GPUIDLE_RETURN_IF_ERROR(Time(v, at, keys::kEndNs, &s->end_ns));
    GPUIDLE_RETURN_IF_ERROR(InOrder(at, keys::kStartNs, s->start_ns, keys::kEndNs, s->end_ns));
    if (s->end_ns - s->start_ns > kMaxDurationNs) return Error(at, "longer than 2^52 ns");
    GPUIDLE_RETURN_IF_ERROR(Duration(v, at, keys::kBusyNs, &s->busy_ns));
    GPUIDLE_RETURN_IF_ERROR(Subcauses(v, at, &s->idle));
    GPUIDLE_RETURN_IF_ERROR(Duration(v, at, keys::kOneOffNs, &s->one_off_ns, Need::kOptional));
    // A step's span is its busy, idle and one-off time.
    const int64_t parts = s->busy_ns + s->idle.TotalNs() + s->one_off_ns;
    if (parts != s->end_ns - s->start_ns) {
      return Error({&at, keys::kBusyNs},
                   absl::StrCat(keys::kBusyNs, " + idle + ", keys::kOneOffNs, " (", parts,
                                ") is not the step's span (", s->end_ns - s->start_ns, ")"));
    }
    GPUIDLE_RETURN_IF_ERROR(
        OptionalInt64(v, at, keys::kCommWaitNs, &s->comm_wait_ns, Need::kOptional));
    if (s->comm_wait_ns.value_or(0) < 0) return Error({&at, keys::kCommWaitNs}, "negative");
    GPUIDLE_RETURN_IF_ERROR(
        Within(at, keys::kCommWaitNs, s->comm_wait_ns.value_or(0), keys::kBusyNs, s->busy_ns));
    return StepGpuOf(v, at, s);
  }

  absl::Status Gap(const Value& v, const Path& at, GapRecord* g) const {
    GPUIDLE_RETURN_IF_ERROR(CheckObject(v, at));
    GPUIDLE_RETURN_IF_ERROR(OptionalInt(v, at, keys::kRank, &g->rank));
    GPUIDLE_RETURN_IF_ERROR(Int(v, at, keys::kDevice, &g->device));
    GPUIDLE_RETURN_IF_ERROR(Time(v, at, keys::kStartNs, &g->start_ns));
    GPUIDLE_RETURN_IF_ERROR(Time(v, at, keys::kEndNs, &g->end_ns));
    GPUIDLE_RETURN_IF_ERROR(InOrder(at, keys::kStartNs, g->start_ns, keys::kEndNs, g->end_ns));
    if (g->end_ns - g->start_ns > kMaxDurationNs) return Error(at, "longer than 2^52 ns");
    GPUIDLE_RETURN_IF_ERROR(CauseFields(v, at, &g->subcause));
    GPUIDLE_RETURN_IF_ERROR(String(v, at, keys::kNextOp, &g->next_op));
    GPUIDLE_RETURN_IF_ERROR(Uint64(v, at, keys::kThread, &g->thread));
    GPUIDLE_RETURN_IF_ERROR(String(v, at, keys::kEvidence, &g->evidence));
    return String(v, at, keys::kCallSite, &g->call_site);
  }

  absl::Status OffenderAt(const Value& v, const Path& at, Offender* o) const {
    GPUIDLE_RETURN_IF_ERROR(CheckObject(v, at));
    GPUIDLE_RETURN_IF_ERROR(CauseFields(v, at, &o->subcause));
    GPUIDLE_RETURN_IF_ERROR(String(v, at, keys::kWhat, &o->what));
    GPUIDLE_RETURN_IF_ERROR(String(v, at, keys::kSite, &o->site));
    GPUIDLE_RETURN_IF_ERROR(Count(v, at, keys::kIdleNs, &o->idle_ns));
    return Count(v, at, keys::kCount, &o->count);
  }

  absl::Status PeriodicWorkAt(const Value& v, const Path& at, PeriodicWork* p) const {
    GPUIDLE_RETURN_IF_ERROR(CheckObject(v, at));
    GPUIDLE_RETURN_IF_ERROR(String(v, at, keys::kActivity, &p->activity));
    GPUIDLE_RETURN_IF_ERROR(String(v, at, keys::kSite, &p->site));
    GPUIDLE_RETURN_IF_ERROR(Count(v, at, keys::kOccurrences, &p->occurrences));
    GPUIDLE_RETURN_IF_ERROR(Count(v, at, keys::kSpanNs, &p->span_ns));
    GPUIDLE_RETURN_IF_ERROR(Count(v, at, keys::kIdleNs, &p->idle_ns));
    GPUIDLE_RETURN_IF_ERROR(Subcauses(v, at, &p->idle));
    if (p->idle.TotalNs() != p->idle_ns) {
      return Error({&at, keys::kIdleBySubcause},
                   absl::StrCat("does not add up to ", keys::kIdleNs));
    }
    return String(v, at, keys::kFix, &p->fix);
  }

  // Optional: reports before it lack it.
  absl::Status VerdictField(const Value& doc, const Path& root, Report* r) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* verdict,
                             Object(doc, root, keys::kVerdict, Need::kOptional));
    if (verdict == nullptr) return absl::OkStatus();
    const Path at{&root, keys::kVerdict};
    Verdict& v = r->verdict.emplace();
    GPUIDLE_RETURN_IF_ERROR(Bool(*verdict, at, keys::kWorthFixing, &v.worth_fixing));
    GPUIDLE_RETURN_IF_ERROR(Count(*verdict, at, keys::kLostNs, &v.lost_ns));
    GPUIDLE_RETURN_IF_ERROR(Count(*verdict, at, keys::kSteadyNs, &v.steady_ns));
    return Share(*verdict, at, keys::kThresholdShare, &v.threshold_share);
  }

  // Reports before share_of_steady_state: each piece of advice's share of the lost time, times
  // the lost time's share of the steady state.
  static void FillShareOfSteadyState(Report* r) {
    int64_t lost = 0, steady = 0;
    for (const DeviceReport& d : r->devices) {
      lost += d.LostNs();
      steady += d.PhaseNs(Phase::kSteady);
    }
    for (Advice& a : r->advice) {
      if (a.share_of_steady_state >= 0) continue;
      a.share_of_steady_state =
          steady > 0 ? std::min(1.0, a.share_of_lost_time * static_cast<double>(lost) /
                                         static_cast<double>(steady))
                     : 0;
    }
  }

  absl::Status AdviceAt(const Value& v, const Path& at, Advice* a) const {
    GPUIDLE_RETURN_IF_ERROR(CheckObject(v, at));
    GPUIDLE_RETURN_IF_ERROR(CauseFields(v, at, &a->subcause));
    GPUIDLE_RETURN_IF_ERROR(Share(v, at, keys::kShareOfLostTime, &a->share_of_lost_time));
    GPUIDLE_ASSIGN_OR_RETURN(const Value* of_steady,
                             Get(v, at, keys::kShareOfSteadyState, Need::kOptional));
    a->share_of_steady_state = -1;  // not in the report: FillShareOfSteadyState
    if (of_steady != nullptr) {
      GPUIDLE_RETURN_IF_ERROR(Share(v, at, keys::kShareOfSteadyState, &a->share_of_steady_state));
    }
    GPUIDLE_RETURN_IF_ERROR(String(v, at, keys::kFix, &a->fix));
    // The predicted gain (optional: reports before it lack it).
    GPUIDLE_RETURN_IF_ERROR(Count(v, at, keys::kGainNs, &a->gain_ns, Need::kOptional));
    GPUIDLE_RETURN_IF_ERROR(
        OptionalInt64(v, at, keys::kGainPerStepNs, &a->gain_per_step_ns, Need::kOptional));
    const int64_t per_step = a->gain_per_step_ns.value_or(0);
    if (per_step < 0 || per_step > kMaxDurationNs) {
      return Error({&at, keys::kGainPerStepNs},
                   "not a length of time gpuidle writes (0 to 2^52 ns)");
    }
    GPUIDLE_ASSIGN_OR_RETURN(const Value* share,
                             Get(v, at, keys::kGainShareOfStep, Need::kOptional));
    if (share != nullptr && !share->IsNull()) {
      double step_share = 0;
      GPUIDLE_RETURN_IF_ERROR(Share(v, at, keys::kGainShareOfStep, &step_share));
      a->gain_share_of_step = step_share;
    }
    // Serving advice's prediction (only with a batch).
    GPUIDLE_ASSIGN_OR_RETURN(const Value* batch, Get(v, at, keys::kBatch, Need::kOptional));
    if (batch != nullptr) {
      int64_t n = 0, latency = 0;
      double rate = 0;
      GPUIDLE_RETURN_IF_ERROR(Count(v, at, keys::kBatch, &n));
      GPUIDLE_RETURN_IF_ERROR(Double(v, at, keys::kPredictedRequestsPerS, &rate));
      if (!(rate >= 0)) return Error({&at, keys::kPredictedRequestsPerS}, "not at least 0");
      GPUIDLE_RETURN_IF_ERROR(Duration(v, at, keys::kPredictedLatencyNs, &latency));
      a->batch = n;
      a->predicted_requests_per_s = rate;
      a->predicted_latency_ns = latency;
    }
    return String(v, at, keys::kEvidence, &a->evidence, Need::kOptional);
  }

  absl::Status VisibleDevices(const Value& doc, const Path& root, Report* r) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* list, Array(doc, root, keys::kVisibleDevices,
                                                      kMaxReportListRows, Need::kOptional));
    if (list == nullptr) return absl::OkStatus();
    const Path here{&root, keys::kVisibleDevices};
    r->visible_devices.resize(list->Size());
    for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
      const Value& v = (*list)[i];
      const Path at{&here, "", i};
      GPUIDLE_RETURN_IF_ERROR(CheckObject(v, at));
      VisibleDevice& d = r->visible_devices[i];
      GPUIDLE_RETURN_IF_ERROR(OptionalInt(v, at, keys::kRank, &d.rank));
      GPUIDLE_RETURN_IF_ERROR(Int(v, at, keys::kDevice, &d.device));
      GPUIDLE_RETURN_IF_ERROR(OptionalInt(v, at, keys::kPhysicalIndex, &d.physical_index));
      GPUIDLE_RETURN_IF_ERROR(String(v, at, keys::kUuid, &d.uuid));
      GPUIDLE_RETURN_IF_ERROR(String(v, at, keys::kName, &d.name));
      GPUIDLE_RETURN_IF_ERROR(Bool(v, at, keys::kUsed, &d.used));
    }
    return absl::OkStatus();
  }

  absl::Status Ranks(const Value& doc, const Path& root, Report* r) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* list,
                             Array(doc, root, keys::kRanks, kMaxReportListRows, Need::kOptional));
    if (list == nullptr) return absl::OkStatus();
    const Path here{&root, keys::kRanks};
    r->ranks.resize(list->Size());
    for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
      const Value& v = (*list)[i];
      const Path at{&here, "", i};
      GPUIDLE_RETURN_IF_ERROR(CheckObject(v, at));
      RankReport& k = r->ranks[i];
      GPUIDLE_RETURN_IF_ERROR(Int(v, at, keys::kRank, &k.rank));
      GPUIDLE_RETURN_IF_ERROR(String(v, at, keys::kHost, &k.host));
      GPUIDLE_RETURN_IF_ERROR(OptionalInt64(v, at, keys::kPid, &k.pid));
      GPUIDLE_RETURN_IF_ERROR(OptionalInt(v, at, keys::kWorldSize, &k.world_size));
      GPUIDLE_RETURN_IF_ERROR(
          OptionalInt64(v, at, keys::kWallClockOffsetNs, &k.wall_clock_offset_ns));
      GPUIDLE_RETURN_IF_ERROR(Int64(v, at, keys::kClockOffsetNs, &k.clock_offset_ns));
      // The offset to the job's clock moves time stamps within the timelines' range
      // (model/timeline.h); the wall clock's (ns since 1970) differs from another's within 2^63.
      if (k.clock_offset_ns < kMinTimeNs || k.clock_offset_ns > -kMinTimeNs) {
        return Error({&at, keys::kClockOffsetNs},
                     absl::StrCat(k.clock_offset_ns, " is beyond 2^60 ns either way"));
      }
      if (const int64_t wall = k.wall_clock_offset_ns.value_or(0);
          wall < -kMaxReportSum || wall > kMaxReportSum) {
        return Error({&at, keys::kWallClockOffsetNs},
                     absl::StrCat(wall, " is 2^62 ns or more either way"));
      }
      GPUIDLE_RETURN_IF_ERROR(Count(v, at, keys::kCollectives, &k.collectives));
      GPUIDLE_RETURN_IF_ERROR(Count(v, at, keys::kMatched, &k.matched));
      GPUIDLE_RETURN_IF_ERROR(
          Within(at, keys::kMatched, k.matched, keys::kCollectives, k.collectives));
      GPUIDLE_RETURN_IF_ERROR(Count(v, at, keys::kArrivedLast, &k.arrived_last));
      GPUIDLE_RETURN_IF_ERROR(
          Within(at, keys::kArrivedLast, k.arrived_last, keys::kCollectives, k.collectives));
      GPUIDLE_RETURN_IF_ERROR(Count(v, at, keys::kLateNs, &k.late_ns));
      GPUIDLE_RETURN_IF_ERROR(Count(v, at, keys::kWaitNs, &k.wait_ns));
      GPUIDLE_ASSIGN_OR_RETURN(const Value* cause, Get(v, at, keys::kOwnCause));
      if (!cause->IsNull()) {
        const std::optional<Subcause> s =
            cause->IsString()
                ? ParseSubcause(absl::string_view(cause->GetString(), cause->GetStringLength()))
                : std::nullopt;
        if (!s) return Error({&at, keys::kOwnCause}, "not a qualified subcause (nor null)");
        k.own_cause = *s;
      }
      GPUIDLE_RETURN_IF_ERROR(Share(v, at, keys::kOwnCauseShare, &k.own_cause_share));
    }
    return absl::OkStatus();
  }

  absl::Status Clock(const Value& doc, const Path& root, ClockAlignment* c) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* clock, Object(doc, root, keys::kClock, Need::kOptional));
    if (clock == nullptr) return absl::OkStatus();
    const Path at{&root, keys::kClock};
    GPUIDLE_RETURN_IF_ERROR(String(*clock, at, keys::kMethod, &c->method));
    GPUIDLE_RETURN_IF_ERROR(Count(*clock, at, keys::kHosts, &c->hosts));
    GPUIDLE_RETURN_IF_ERROR(Count(*clock, at, keys::kResidualNs, &c->residual_ns));
    return Share(*clock, at, keys::kMatchedShare, &c->matched_share);
  }

  absl::Status Options(const Value& doc, const Path& root, AnalysisOptions* o) const {
    GPUIDLE_ASSIGN_OR_RETURN(const Value* options, Object(doc, root, keys::kOptions));
    const Path at{&root, keys::kOptions};
    GPUIDLE_RETURN_IF_ERROR(Duration(*options, at, keys::kLaunchGapMaxNs, &o->launch_gap_max_ns));
    GPUIDLE_RETURN_IF_ERROR(
        Duration(*options, at, keys::kDispatchLatencyMaxNs, &o->dispatch_latency_max_ns));
    o->data_range_patterns.clear();
    GPUIDLE_RETURN_IF_ERROR(
        Strings(*options, at, keys::kDataRangePatterns, &o->data_range_patterns));
    GPUIDLE_RETURN_IF_ERROR(Int(*options, at, keys::kSkipSteps, &o->skip_steps, Need::kOptional));
    if (o->skip_steps < 0) return Error({&at, keys::kSkipSteps}, "negative");
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
  return OutOfMemoryIsAnErrorWith(
      [&]() -> absl::StatusOr<Report> {
        rapidjson::Document doc;
        rapidjson::ParseResult result;
        std::string limit, duplicate;
        // Without recursion (a deep input cannot overflow the stack), UTF-8 checked, doubles
        // exactly as written (the writer's shortest form reads back to the same double: RawNumber).
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
          return absl::InvalidArgumentError(absl::StrCat(
              name, ": ", duplicate, " (at byte ", result.Offset(), "): not a gpuidle report"));
        }
        if (!limit.empty()) {
          return absl::ResourceExhaustedError(absl::StrCat(
              name, ": ", limit, " (at byte ", result.Offset(), "): not a gpuidle report"));
        }
        if (result.IsError()) {
          return absl::InvalidArgumentError(
              absl::StrCat(name, ": not JSON: ", rapidjson::GetParseError_En(result.Code()),
                           " (at byte ", result.Offset(), ")"));
        }
        return ReportParser(name).Parse(doc);
      },
      [&] { return absl::StrCat(name, ": out of memory while reading the report"); });
}

absl::StatusOr<Report> ReadReportFile(const std::string& path) {
  return OutOfMemoryIsAnErrorWith(
      [&]() -> absl::StatusOr<Report> {
        GPUIDLE_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> source, OpenByteSource(path));
        return ReadRestOfReport(*source, "", path);
      },
      [&] { return absl::StrCat(path, ": out of memory while reading the report"); });
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
  return expect("{") && expect(absl::StrCat("\"", keys::kSchema, "\"")) && expect(":") &&
         expect(absl::StrCat("\"", kReportSchemaPrefix));
}

absl::StatusOr<InputFile> ReadInputFile(const std::string& path, const ReadProgress& progress) {
  return OutOfMemoryIsAnErrorWith(
      [&] { return ReadInputFileOrThrow(path, progress); },
      [&] { return absl::StrCat(path, ": out of memory while reading it"); });
}

}  // namespace gpuidle::internal
