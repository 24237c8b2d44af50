// Whether two paths name one file (issue 30: one home for a rule three layers used).
#ifndef GPUIDLE_LIB_CORE_SAME_FILE_H_
#define GPUIDLE_LIB_CORE_SAME_FILE_H_

#include <string>

namespace gpuidle::internal {

// True if a and b name one file: the same path, or paths that both exist and lead (through
// links, other spellings, hard links) to the same device and inode. False if either cannot be
// looked at.
bool SameFile(const std::string& a, const std::string& b);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_CORE_SAME_FILE_H_
