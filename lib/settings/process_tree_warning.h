// gpuidle's one warning per process tree (issue 30: one home for a rule three front ends kept):
// preloading and `gpuidle run` reach every child process, and a shell script should not print the
// same line for each command it runs. The first process that warns sets GPUIDLE_WARNED in its
// environment (or its child's); its descendants inherit it and stay silent.
#ifndef GPUIDLE_LIB_SETTINGS_PROCESS_TREE_WARNING_H_
#define GPUIDLE_LIB_SETTINGS_PROCESS_TREE_WARNING_H_

namespace gpuidle::internal {

inline constexpr char kWarnedVariable[] = "GPUIDLE_WARNED";

// Whether an ancestor (or this process) has given the process tree's warning.
bool ProcessTreeWarned();

// Marks this process's environment, which its children inherit (not thread-safe: setenv).
void MarkProcessTreeWarned();

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_SETTINGS_PROCESS_TREE_WARNING_H_
