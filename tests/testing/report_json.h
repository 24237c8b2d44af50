// Compares a replayed report with the one a live run wrote (tests/replay).
#ifndef GPUIDLE_TESTS_TESTING_REPORT_JSON_H_
#define GPUIDLE_TESTS_TESTING_REPORT_JSON_H_

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"

namespace gpuidle::testing {

// The report as JSON without "inputs" (file names differ between the live run and the replay).
inline rapidjson::Document ComparableJson(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  EXPECT_FALSE(doc.HasParseError());
  if (doc.IsObject()) doc.RemoveMember("inputs");
  // The advice's wording grows with the product (reports recorded on the GPU keep the words of
  // their day); its subcause, share and predicted gain are compared.
  if (doc.IsObject() && doc.HasMember("advice") && doc["advice"].IsArray()) {
    for (auto& a : doc["advice"].GetArray()) {
      if (!a.IsObject()) continue;
      a.RemoveMember("fix");
      a.RemoveMember("evidence");
    }
  }
  return doc;
}

inline std::string SchemaOf(const rapidjson::Value& doc) {
  if (!doc.IsObject() || !doc.HasMember("schema") || !doc["schema"].IsString()) return "";
  return doc["schema"].GetString();
}

// Where `recorded` and `replayed` differ on a field `recorded` has ("" if nowhere); fields that
// only `replayed` has are not compared.
inline std::string FirstDifference(const rapidjson::Value& recorded,
                                   const rapidjson::Value& replayed, const std::string& path) {
  if (recorded.IsObject() && replayed.IsObject()) {
    for (const auto& m : recorded.GetObject()) {
      const std::string at = path + "." + m.name.GetString();
      if (!replayed.HasMember(m.name)) return at + " (missing)";
      const std::string d = FirstDifference(m.value, replayed[m.name], at);
      if (!d.empty()) return d;
    }
    return "";
  }
  if (recorded.IsArray() && replayed.IsArray()) {
    if (recorded.Size() != replayed.Size()) return path + " (length)";
    for (rapidjson::SizeType i = 0; i < recorded.Size(); ++i) {
      const std::string d =
          FirstDifference(recorded[i], replayed[i], absl::StrCat(path, "[", i, "]"));
      if (!d.empty()) return d;
    }
    return "";
  }
  return recorded == replayed ? "" : path;
}

// Reports recorded before the start-up's compilation needed compiler evidence (issue 28) call
// the host stretch before the CUDA runtime's lazy loading of a program's own kernels
// ("compilation", evidence "before cuLibraryLoad...") what a replay now calls set-up. For such
// recordings: every start-up "parts" array in both documents with that compilation folded into
// set_up (its ns summed, its count and evidence dropped), so that the time still compares.
inline void FoldAheadOfTimeLoadCompilationIntoSetUp(rapidjson::Value& v,
                                                    rapidjson::Document::AllocatorType& a) {
  if (v.IsArray()) {
    for (auto& e : v.GetArray()) FoldAheadOfTimeLoadCompilationIntoSetUp(e, a);
    return;
  }
  if (!v.IsObject()) return;
  for (auto& m : v.GetObject()) FoldAheadOfTimeLoadCompilationIntoSetUp(m.value, a);
  if (!v.HasMember("parts") || !v["parts"].IsArray()) return;
  int64_t set_up_ns = 0;
  bool folded = false;
  rapidjson::Value kept(rapidjson::kArrayType);
  for (auto& part : v["parts"].GetArray()) {
    const std::string kind =
        part.HasMember("kind") && part["kind"].IsString() ? part["kind"].GetString() : "";
    const std::string evidence = part.HasMember("evidence") && part["evidence"].IsString()
                                     ? part["evidence"].GetString()
                                     : "";
    const bool before_library_load =
        kind == "compilation" && evidence.rfind("before cuLibraryLoad", 0) == 0;
    if ((kind == "set_up" || before_library_load) && part.HasMember("ns") && part["ns"].IsInt64()) {
      set_up_ns += part["ns"].GetInt64();
      folded = true;
      continue;
    }
    kept.PushBack(rapidjson::Value(part, a), a);
  }
  if (folded) {
    rapidjson::Value set_up(rapidjson::kObjectType);
    set_up.AddMember("kind", "set_up", a);
    set_up.AddMember("ns", set_up_ns, a);
    kept.PushBack(set_up, a);
  }
  v["parts"] = kept;
}

// Reports recorded before the verdict (issue 31) advise on every subcause with 5% of the lost
// time. The replay gives no advice when the steady state lost less than the verdict's threshold,
// and none for a subcause under 1% of the steady state: such items of the recording are dropped
// before the comparison (only they; any other difference in the advice still fails).
inline void DropAdviceBelowTheVerdictsFloors(const rapidjson::Value& replayed,
                                             rapidjson::Document& recorded) {
  if (recorded.HasMember("verdict") || !replayed.HasMember("verdict") ||
      !recorded.HasMember("advice") || !recorded["advice"].IsArray() ||
      !replayed.HasMember("advice") || !replayed["advice"].IsArray()) {
    return;
  }
  const rapidjson::Value& verdict = replayed["verdict"];
  const bool worth_fixing = verdict["worth_fixing"].GetBool();
  const double lost_share = verdict["lost_share"].GetDouble();
  constexpr double kAdviceMinSteadyShare = 0.01;  // AnalysisOptions' default
  rapidjson::Value kept(rapidjson::kArrayType);
  for (auto& a : recorded["advice"].GetArray()) {
    bool advised_again = false;
    for (const auto& b : replayed["advice"].GetArray()) {
      advised_again = advised_again || b["subcause"] == a["subcause"];
    }
    const bool below_floor =
        !worth_fixing || a["share_of_lost_time"].GetDouble() * lost_share < kAdviceMinSteadyShare;
    if (!advised_again && below_floor) continue;
    kept.PushBack(rapidjson::Value(a, recorded.GetAllocator()), recorded.GetAllocator());
  }
  recorded["advice"] = kept;
}

// Where `replayed` and `recorded` differ; fold_start_up: both with the fold above first.
inline ::testing::AssertionResult CompareReports(const std::string& replayed_json,
                                                 const std::string& recorded_json,
                                                 bool fold_start_up) {
  rapidjson::Document replayed = ComparableJson(replayed_json);
  rapidjson::Document recorded = ComparableJson(recorded_json);
  if (SchemaOf(recorded) != SchemaOf(replayed)) {
    replayed.RemoveMember("schema");
    recorded.RemoveMember("schema");
  }
  DropAdviceBelowTheVerdictsFloors(replayed, recorded);
  if (fold_start_up) {
    FoldAheadOfTimeLoadCompilationIntoSetUp(replayed, replayed.GetAllocator());
    FoldAheadOfTimeLoadCompilationIntoSetUp(recorded, recorded.GetAllocator());
  }
  const std::string d = FirstDifference(recorded, replayed, "$");
  if (d.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "differs at " << d << "; replayed:\n" << replayed_json;
}

// The replayed report is the one the live run wrote, on every field the recording has: a field
// added since (within a schema, fields are only added; docs/REPORT_SCHEMA.md) is not compared,
// every other value must be the same (the recordings are made again for a change of meaning).
inline ::testing::AssertionResult ReadsBackAs(const std::string& replayed_json,
                                              const std::string& recorded_json) {
  return CompareReports(replayed_json, recorded_json, /*fold_start_up=*/false);
}

// ReadsBackAs for a recording made before that rule: every other part, and every phase's total,
// is compared as recorded.
inline ::testing::AssertionResult ReadsBackAsRecordedBeforeIssue28(
    const std::string& replayed_json, const std::string& recorded_json) {
  return CompareReports(replayed_json, recorded_json, /*fold_start_up=*/true);
}

}  // namespace gpuidle::testing

#endif  // GPUIDLE_TESTS_TESTING_REPORT_JSON_H_
