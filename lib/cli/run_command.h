// `gpuidle run [options] [--] COMMAND [ARGS...]`: runs a command with gpuidle's injection library
// loaded into it (CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH) and the options passed as
// GPUIDLE_* variables, and exits with the command's status, like `time` or `nice` would.
#ifndef GPUIDLE_LIB_CLI_RUN_COMMAND_H_
#define GPUIDLE_LIB_CLI_RUN_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gpuidle::internal {

// The shells' codes for a command that could not be started.
inline constexpr int kExitCannotExecute = 126;  // found, but not executable
inline constexpr int kExitCommandNotFound = 127;

// The options of `gpuidle run` in the usage texts: a heading line, then a line per flag from
// the option table.
std::string RunOptionsUsage();

// The text of `gpuidle run --help`: its usage line, what it does, its options, its exit codes.
std::string RunUsage();

// args are those after "run". Returns the command's exit status, 128 + N if signal N killed it,
// kExitUsage for a bad command line (the command is not run), kExitNoLibrary if libgpuidle.so
// cannot be found, or kExitCannotExecute / kExitCommandNotFound. The command inherits standard
// input, output and error; gpuidle's own messages go to err (--help, RunUsage(), to out).
int RunCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// The injection library: $GPUIDLE_LIBRARY if set (made absolute), else libgpuidle.so (or its
// SONAME file) in <dir of this executable>/../lib, the install's libdir, ../lib/<multiarch>.
// NotFound lists where it looked.
absl::StatusOr<std::string> FindInjectionLibrary();

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_CLI_RUN_COMMAND_H_
