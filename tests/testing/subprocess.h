// Runs a program the way a user would, for tests of whole processes (exit statuses, signals,
// what a program prints with and without gpuidle).
//
//   TempDir dir;
//   ProcessResult r = RunProcess(dir, {"/bin/echo", "hi"}, {{"LD_PRELOAD", lib}});
//   EXPECT_EQ(r.out, "hi\n");
#ifndef GPUIDLE_TESTS_TESTING_SUBPROCESS_H_
#define GPUIDLE_TESTS_TESTING_SUBPROCESS_H_

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "testing/temp_dir.h"

namespace gpuidle::testing {

struct ProcessResult {
  int code = -1;  // exit status, or -signal if the process was killed
  std::string out;
  std::string err;
};

struct ProcessLaunch {
  std::vector<std::string> argv;           // argv[0] is run through PATH
  std::map<std::string, std::string> env;  // added to the clean environment
  std::string cwd;                         // "" = the test's
  std::string stdin_path = "/dev/null";
};

// The test's environment without anything that changes what gpuidle does (GPUIDLE_*,
// CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH, LD_PRELOAD), plus extra. In a sanitizer build
// (GPUIDLE_SANITIZE) an LD_PRELOAD in extra gets the sanitizer runtime in front of it.
std::vector<std::string> CleanEnvironment(const std::map<std::string, std::string>& extra);

// Starts a process with stdout and stderr going to files in dir and the signal dispositions
// of a shell's foreground job. Returns its pid (-1 and a test failure if it cannot start).
pid_t StartProcess(const TempDir& dir, const ProcessLaunch& launch);
// Waits for a process from StartProcess and reads what it printed.
ProcessResult FinishProcess(const TempDir& dir, pid_t pid);

inline ProcessResult RunProcess(const TempDir& dir, std::vector<std::string> argv,
                                std::map<std::string, std::string> env = {}) {
  ProcessLaunch launch;
  launch.argv = std::move(argv);
  launch.env = std::move(env);
  return FinishProcess(dir, StartProcess(dir, launch));
}

}  // namespace gpuidle::testing

#endif  // GPUIDLE_TESTS_TESTING_SUBPROCESS_H_
