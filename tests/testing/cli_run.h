// Runs the gpuidle command line in the test's process and keeps what it printed.
#ifndef GPUIDLE_TESTS_TESTING_CLI_RUN_H_
#define GPUIDLE_TESTS_TESTING_CLI_RUN_H_

#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "gtest/gtest.h"

namespace gpuidle::testing {

struct CliResult {
  int code = -1;
  std::string out;
  std::string err;
};

inline CliResult Cli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  CliResult r;
  r.code = internal::RunCli(args, out, err);
  r.out = out.str();
  r.err = err.str();
  EXPECT_LT(r.code, 124) << "exit codes from 124 up are reserved by shells and timeout(1)";
  return r;
}

}  // namespace gpuidle::testing

#endif  // GPUIDLE_TESTS_TESTING_CLI_RUN_H_
