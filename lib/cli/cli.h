// The gpuidle command line. RunCli is main() without the process: tests call it directly.
#ifndef GPUIDLE_LIB_CLI_CLI_H_
#define GPUIDLE_LIB_CLI_CLI_H_

#include <ostream>
#include <string>
#include <vector>

namespace gpuidle::internal {

// Exit codes (all below 124, which shells and timeout(1) reserve).
inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;
inline constexpr int kExitUsage = 2;      // bad command line
inline constexpr int kExitBadInput = 3;   // a trace that cannot be read
inline constexpr int kExitBadOutput = 4;  // the report cannot be written

int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_CLI_CLI_H_
