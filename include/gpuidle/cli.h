// The gpuidle command line as a function: `gpuidle ARGS...` without the process, for language
// bindings (`python -m gpuidle`) and launchers. The gpuidle executable is this and nothing more.
//
//   int code = gpuidle::RunCommandLine({"analyze", "trace.json.gz"}, std::cout, std::cerr);
#ifndef GPUIDLE_INCLUDE_GPUIDLE_CLI_H_
#define GPUIDLE_INCLUDE_GPUIDLE_CLI_H_

#include <ostream>
#include <string>
#include <vector>

#include "gpuidle/export.h"

namespace gpuidle {

// Runs `gpuidle args...` (args without the program name) with out and err as standard output
// and error; returns the exit code `gpuidle` would exit with (0 ok, 2 bad command line, 3
// unreadable trace, 4 report not written, 5 libgpuidle.so not found; `run` passes on its
// command's status). `run` starts its command as a child process and waits for it.
GPUIDLE_EXPORT int RunCommandLine(const std::vector<std::string>& args, std::ostream& out,
                                  std::ostream& err);

}  // namespace gpuidle

#endif  // GPUIDLE_INCLUDE_GPUIDLE_CLI_H_
