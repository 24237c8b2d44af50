// The gpuidle command line. RunCli is main() without the process: tests call it directly, and
// libgpuidle.so exports it as gpuidle::RunCommandLine (gpuidle/cli.h).
#ifndef GPUIDLE_LIB_CLI_CLI_H_
#define GPUIDLE_LIB_CLI_CLI_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace gpuidle::internal {

// gpuidle's own exit codes (all below 124, which shells and timeout(1) reserve). `gpuidle run`
// exits with the command's status instead (run_command.h).
inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;
inline constexpr int kExitUsage = 2;      // bad command line
inline constexpr int kExitBadInput = 3;   // a trace that cannot be read
inline constexpr int kExitBadOutput = 4;  // the report cannot be written
inline constexpr int kExitNoLibrary = 5;  // run: libgpuidle.so not found (an installation problem)

// The exit code of inputs that could not be analysed: kExitBadInput for what the input is to
// blame for (missing, unreadable, not a trace), kExitInternal for the rest.
int ExitCodeForAnalysis(const absl::Status& s);

int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// The text of `gpuidle help`.
absl::string_view CliUsage();

// Prints "gpuidle: <problem>" and where the usage is; returns kExitUsage.
int UsageError(std::ostream& err, absl::string_view problem);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_CLI_CLI_H_
