#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "cli/cli.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  // The analysis turns running out of memory into an error; this catches what is left (the
  // text of a huge report), so that the answer is a message and an exit code, not an abort.
  try {
    return gpuidle::internal::RunCli(args, std::cout, std::cerr);
  } catch (const std::bad_alloc&) {
    std::cerr << "gpuidle: out of memory\n";
    return gpuidle::internal::kExitInternal;
  }
}
