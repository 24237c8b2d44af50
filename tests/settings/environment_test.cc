#include "settings/environment.h"

#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gpuidle/profiler.h"
#include "gtest/gtest.h"

namespace gpuidle {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Every test starts with no GPUIDLE_* variable set; the process's own values come back after.
class ProfilerOptionsFromEnvironmentTest : public ::testing::Test {
 protected:
  ProfilerOptionsFromEnvironmentTest() {
    for (const char* name : internal::kProfilerVariables) {
      if (const char* value = std::getenv(name)) saved_[name] = value;
      ::unsetenv(name);
    }
  }
  ~ProfilerOptionsFromEnvironmentTest() override {
    for (const char* name : internal::kProfilerVariables) {
      const auto it = saved_.find(name);
      if (it != saved_.end()) {
        ::setenv(name, it->second.c_str(), 1);
      } else {
        ::unsetenv(name);
      }
    }
  }

  static void Set(const char* name, const std::string& value) { ::setenv(name, value.c_str(), 1); }

  // The error for one variable set to value (the others unset).
  static absl::Status ErrorFor(const char* name, const std::string& value) {
    Set(name, value);
    absl::StatusOr<ProfilerOptions> options = ProfilerOptionsFromEnvironment();
    ::unsetenv(name);
    return options.status();
  }

  static void ExpectRejected(const char* name, const std::string& value, const std::string& why) {
    const absl::Status status = ErrorFor(name, value);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << name << "=" << value;
    EXPECT_THAT(std::string(status.message()), StartsWith(absl::StrCat(name, "=", value, ": ")));
    EXPECT_THAT(std::string(status.message()), HasSubstr(why));
  }

 private:
  std::map<std::string, std::string> saved_;
};

TEST_F(ProfilerOptionsFromEnvironmentTest, GivesTheDefaultsWithoutVariables) {
  const absl::StatusOr<ProfilerOptions> options = ProfilerOptionsFromEnvironment();
  ASSERT_TRUE(options.ok()) << options.status();
  const ProfilerOptions defaults;
  EXPECT_EQ(options->report_path, "");
  EXPECT_EQ(options->report_format, "");
  EXPECT_EQ(options->trace_path, "");
  EXPECT_TRUE(options->print_summary);
  EXPECT_EQ(options->max_records, defaults.max_records);
  EXPECT_EQ(options->buffer_pool_mb, defaults.buffer_pool_mb);
  EXPECT_EQ(options->analysis.launch_gap_max_ns, defaults.analysis.launch_gap_max_ns);
  EXPECT_EQ(options->analysis.dispatch_latency_max_ns, defaults.analysis.dispatch_latency_max_ns);
  EXPECT_EQ(options->analysis.data_range_patterns, defaults.analysis.data_range_patterns);
  EXPECT_EQ(options->analysis.max_gap_records, defaults.analysis.max_gap_records);
}

TEST_F(ProfilerOptionsFromEnvironmentTest, ReadsEveryVariable) {
  Set("GPUIDLE_OUT", "/tmp/report.%r.json");
  Set("GPUIDLE_FORMAT", "json");
  Set("GPUIDLE_TRACE", "trace.%p.json.gz");
  Set("GPUIDLE_QUIET", "1");
  Set("GPUIDLE_MAX_RECORDS", "1000");
  Set("GPUIDLE_BUFFER_MB", "256");
  Set("GPUIDLE_LAUNCH_GAP_MAX_US", "250");
  Set("GPUIDLE_DISPATCH_LATENCY_MAX_US", "12.5");
  Set("GPUIDLE_DATA_RANGE", "fetch, prefetch_batch,,");
  Set("GPUIDLE_MAX_GAPS", "7");
  Set("GPUIDLE_SKIP_STEPS", "2");
  const absl::StatusOr<ProfilerOptions> options = ProfilerOptionsFromEnvironment();
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->report_path, "/tmp/report.%r.json");  // expanded when written
  EXPECT_EQ(options->report_format, "json");
  EXPECT_EQ(options->trace_path, "trace.%p.json.gz");
  EXPECT_FALSE(options->print_summary);
  EXPECT_EQ(options->max_records, 1000);
  EXPECT_EQ(options->buffer_pool_mb, 256);
  EXPECT_EQ(options->analysis.launch_gap_max_ns, 250'000);
  EXPECT_EQ(options->analysis.dispatch_latency_max_ns, 12'500);
  EXPECT_EQ(options->analysis.max_gap_records, 7);
  EXPECT_EQ(options->analysis.skip_steps, 2);
}

TEST_F(ProfilerOptionsFromEnvironmentTest, AddsDataRangePatternsToTheDefaults) {
  Set("GPUIDLE_DATA_RANGE", " fetch ,prefetch_batch,,");
  const absl::StatusOr<ProfilerOptions> options = ProfilerOptionsFromEnvironment();
  ASSERT_TRUE(options.ok()) << options.status();
  std::vector<std::string> expected = AnalysisOptions().data_range_patterns;
  expected.push_back("fetch");
  expected.push_back("prefetch_batch");
  EXPECT_THAT(options->analysis.data_range_patterns, ElementsAreArray(expected));
}

TEST_F(ProfilerOptionsFromEnvironmentTest, TreatsAnEmptyVariableAsUnset) {
  for (const char* name : internal::kProfilerVariables) Set(name, "");
  const absl::StatusOr<ProfilerOptions> options = ProfilerOptionsFromEnvironment();
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->max_records, ProfilerOptions().max_records);
  EXPECT_TRUE(options->print_summary);
}

TEST_F(ProfilerOptionsFromEnvironmentTest, ReadsEachSpellingOfQuiet) {
  for (const char* yes : {"1", "true", "yes", "TRUE", "Yes"}) {
    Set("GPUIDLE_QUIET", yes);
    const absl::StatusOr<ProfilerOptions> options = ProfilerOptionsFromEnvironment();
    ASSERT_TRUE(options.ok()) << yes;
    EXPECT_FALSE(options->print_summary) << yes;
  }
  for (const char* no : {"0", "false", "no", "NO"}) {
    Set("GPUIDLE_QUIET", no);
    const absl::StatusOr<ProfilerOptions> options = ProfilerOptionsFromEnvironment();
    ASSERT_TRUE(options.ok()) << no;
    EXPECT_TRUE(options->print_summary) << no;
  }
}

// The analysis needs a positive launch gap; a dispatch latency of 0 means "no slack".
TEST_F(ProfilerOptionsFromEnvironmentTest, AcceptsFractionalThresholdsAndAZeroLatency) {
  Set("GPUIDLE_LAUNCH_GAP_MAX_US", "0.5");
  Set("GPUIDLE_DISPATCH_LATENCY_MAX_US", "0");
  absl::StatusOr<ProfilerOptions> options = ProfilerOptionsFromEnvironment();
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->analysis.launch_gap_max_ns, 500);
  EXPECT_EQ(options->analysis.dispatch_latency_max_ns, 0);
  Set("GPUIDLE_DISPATCH_LATENCY_MAX_US", "0.001");
  options = ProfilerOptionsFromEnvironment();
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->analysis.dispatch_latency_max_ns, 1);
  ExpectRejected("GPUIDLE_LAUNCH_GAP_MAX_US", "0", "must be a positive number of microseconds");
  // Written as 0 in other ways: "0.000", "0e5" are 0; negative or vanishing values are not taken
  // for it (issue 29).
  for (const char* zero : {"0.000", "0e5"}) {
    Set("GPUIDLE_DISPATCH_LATENCY_MAX_US", zero);
    options = ProfilerOptionsFromEnvironment();
    ASSERT_TRUE(options.ok()) << zero << ": " << options.status();
    EXPECT_EQ(options->analysis.dispatch_latency_max_ns, 0);
  }
  ExpectRejected("GPUIDLE_DISPATCH_LATENCY_MAX_US", "-0", "must be a non-negative number");
  ExpectRejected("GPUIDLE_DISPATCH_LATENCY_MAX_US", "-1e-320", "must be a non-negative number");
  ExpectRejected("GPUIDLE_DISPATCH_LATENCY_MAX_US", "1e-400", "must be 0 or at least 0.001");
}

TEST_F(ProfilerOptionsFromEnvironmentTest, AcceptsTheBufferSizeLimits) {
  for (const char* mb : {"1", "4096"}) {
    Set("GPUIDLE_BUFFER_MB", mb);
    const absl::StatusOr<ProfilerOptions> options = ProfilerOptionsFromEnvironment();
    ASSERT_TRUE(options.ok()) << mb;
  }
}

TEST_F(ProfilerOptionsFromEnvironmentTest, RejectsAnUnknownFormat) {
  ExpectRejected("GPUIDLE_FORMAT", "xml", "must be \"text\", \"json\" or \"html\"");
  ExpectRejected("GPUIDLE_FORMAT", "JSON5", "must be \"text\", \"json\" or \"html\"");
}

TEST_F(ProfilerOptionsFromEnvironmentTest, RejectsABadQuietFlag) {
  ExpectRejected("GPUIDLE_QUIET", "maybe", "must be 1, true, yes, 0, false or no");
  ExpectRejected("GPUIDLE_QUIET", "2", "must be 1, true, yes, 0, false or no");
}

TEST_F(ProfilerOptionsFromEnvironmentTest, RejectsABadRecordLimit) {
  for (const char* value : {"0", "-1", "1.5", "lots", "1e6", "99999999999999999999"}) {
    ExpectRejected("GPUIDLE_MAX_RECORDS", value, "must be a positive integer");
  }
}

TEST_F(ProfilerOptionsFromEnvironmentTest, RejectsABufferSizeOutOfRange) {
  for (const char* value : {"0", "4097", "-3", "64MB"}) {
    ExpectRejected("GPUIDLE_BUFFER_MB", value, "must be an integer from 1 to 4096");
  }
}

TEST_F(ProfilerOptionsFromEnvironmentTest, RejectsABadThreshold) {
  for (const char* name : {"GPUIDLE_LAUNCH_GAP_MAX_US", "GPUIDLE_DISPATCH_LATENCY_MAX_US"}) {
    for (const char* value : {"-1", "abc", "10us", "1,5"}) {
      ExpectRejected(name, value, "number of microseconds");
    }
    ExpectRejected(name, "3600000001", "must be at most 3600000000 (one hour)");
  }
}

TEST_F(ProfilerOptionsFromEnvironmentTest, RejectsABadGapCount) {
  for (const char* value : {"-1", "1000001", "many"}) {
    ExpectRejected("GPUIDLE_MAX_GAPS", value, "must be an integer from 0 to 1000000");
  }
}

TEST_F(ProfilerOptionsFromEnvironmentTest, RejectsAnUnknownPlaceholderInAnOutputPath) {
  ExpectRejected("GPUIDLE_OUT", "report.%x.json", "unknown placeholder %x");
  ExpectRejected("GPUIDLE_TRACE", "trace%", "ends with a lone %");
}

TEST_F(ProfilerOptionsFromEnvironmentTest, NamesTheFirstBadVariable) {
  Set("GPUIDLE_FORMAT", "xml");
  Set("GPUIDLE_BUFFER_MB", "0");
  const absl::Status status = ProfilerOptionsFromEnvironment().status();
  EXPECT_THAT(std::string(status.message()), StartsWith("GPUIDLE_FORMAT=xml: "));
}

TEST_F(ProfilerOptionsFromEnvironmentTest, LeavesTheEnvironmentAsItFoundIt) {
  Set("GPUIDLE_OUT", "r.json");
  ASSERT_TRUE(ProfilerOptionsFromEnvironment().ok());
  EXPECT_STREQ(std::getenv("GPUIDLE_OUT"), "r.json");
}

// --- the pieces `gpuidle run` uses ---

TEST(ProfilerOptionsFromVariables, ReadsFromTheGivenLookup) {
  const std::map<std::string, std::string> vars = {{"GPUIDLE_FORMAT", "text"},
                                                   {"GPUIDLE_MAX_GAPS", "3"}};
  const absl::StatusOr<ProfilerOptions> options =
      internal::ProfilerOptionsFromVariables([&](const char* name) -> const char* {
        const auto it = vars.find(name);
        return it == vars.end() ? nullptr : it->second.c_str();
      });
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->report_format, "text");
  EXPECT_EQ(options->analysis.max_gap_records, 3);
}

TEST_F(ProfilerOptionsFromEnvironmentTest, ReadsTheHostSamplePeriodAndThePythonSwitch) {
  const ProfilerOptions defaults;
  EXPECT_EQ(defaults.host_sample_period_ns, 5'000'000);
  EXPECT_TRUE(defaults.python_integration);
  Set("GPUIDLE_HOST_SAMPLE_MS", "2.5");
  Set("GPUIDLE_PYTHON", "no");
  absl::StatusOr<ProfilerOptions> options = ProfilerOptionsFromEnvironment();
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->host_sample_period_ns, 2'500'000);
  EXPECT_FALSE(options->python_integration);
  Set("GPUIDLE_HOST_SAMPLE_MS", "0");  // off
  Set("GPUIDLE_PYTHON", "TRUE");
  options = ProfilerOptionsFromEnvironment();
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->host_sample_period_ns, 0);
  EXPECT_TRUE(options->python_integration);
  ::unsetenv("GPUIDLE_HOST_SAMPLE_MS");
  ::unsetenv("GPUIDLE_PYTHON");
  ExpectRejected("GPUIDLE_HOST_SAMPLE_MS", "-1", "milliseconds");
  ExpectRejected("GPUIDLE_HOST_SAMPLE_MS", "0.01", "at least 0.1 ms");
  ExpectRejected("GPUIDLE_HOST_SAMPLE_MS", "5000", "milliseconds from 0 (off) to 1000");
  ExpectRejected("GPUIDLE_PYTHON", "maybe", "must be 1, true, yes, 0, false or no");
}

TEST(ApplyProfilerVariable, SaysWhyWithoutNamingTheVariable) {
  ProfilerOptions options;
  const absl::Status status = internal::ApplyProfilerVariable("GPUIDLE_FORMAT", "xml", &options);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "must be \"text\", \"json\" or \"html\"");
}

TEST(ApplyProfilerVariable, KnowsEveryListedVariable) {
  for (const char* name : internal::kProfilerVariables) {
    ProfilerOptions options;
    const absl::Status status = internal::ApplyProfilerVariable(name, "1", &options);
    EXPECT_THAT(std::string(status.message()), ::testing::Not(HasSubstr("unknown variable")))
        << name;
  }
  ProfilerOptions options;
  EXPECT_THAT(std::string(internal::ApplyProfilerVariable("GPUIDLE_NOPE", "1", &options).message()),
              HasSubstr("unknown variable GPUIDLE_NOPE"));
}

}  // namespace
}  // namespace gpuidle
