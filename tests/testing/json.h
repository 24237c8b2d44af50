// JSON helpers for tests of the writers: parse a writer's output, read strings out of it.
#ifndef GPUIDLE_TESTS_TESTING_JSON_H_
#define GPUIDLE_TESTS_TESTING_JSON_H_

#include <string>

#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "rapidjson/error/en.h"

namespace gpuidle::testing {

// Parses the writer's output; fails the test if it is not one JSON document.
inline rapidjson::Document Parse(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseValidateEncodingFlag>(json.c_str(), json.size());
  EXPECT_FALSE(doc.HasParseError()) << rapidjson::GetParseError_En(doc.GetParseError())
                                    << " at byte " << doc.GetErrorOffset() << " of\n"
                                    << json;
  return doc;
}

inline std::string Str(const rapidjson::Value& v) {
  return v.IsString() ? std::string(v.GetString(), v.GetStringLength()) : "<not a string>";
}

}  // namespace gpuidle::testing

#endif  // GPUIDLE_TESTS_TESTING_JSON_H_
