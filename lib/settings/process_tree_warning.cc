#include "settings/process_tree_warning.h"

#include <cstdlib>

namespace gpuidle::internal {

bool ProcessTreeWarned() {
  const char* warned = std::getenv(kWarnedVariable);
  return warned != nullptr && warned[0] != '\0';
}

void MarkProcessTreeWarned() { ::setenv(kWarnedVariable, "1", 1); }

}  // namespace gpuidle::internal
