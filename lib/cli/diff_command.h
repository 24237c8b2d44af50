// `gpuidle diff [options] BEFORE AFTER` and `gpuidle diff [options] BEFORE... -- AFTER...`:
// what changed between two runs (traces or reports, as `gpuidle analyze` takes them), per cause,
// per step and in step time, with a verdict (docs/ANALYSIS.md, "Before and after").
#ifndef GPUIDLE_LIB_CLI_DIFF_COMMAND_H_
#define GPUIDLE_LIB_CLI_DIFF_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

namespace gpuidle::internal {

// The usage of the command's own flags (appended to `gpuidle help`).
std::string DiffUsage();

// args are those after "diff". Exit codes as for analyze (cli.h): kExitUsage for a bad command
// line, kExitBadInput for an unreadable input of either run, kExitBadOutput when the diff cannot
// be written. A regression is no error: the verdict says it.
int DiffCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_CLI_DIFF_COMMAND_H_
