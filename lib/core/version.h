#ifndef GPUIDLE_LIB_CORE_VERSION_H_
#define GPUIDLE_LIB_CORE_VERSION_H_

#include "gpuidle/version.h"  // generated from include/gpuidle/version.h.in

namespace gpuidle::internal {

// From project(VERSION) in CMakeLists.txt.
inline constexpr char kVersion[] = GPUIDLE_VERSION;

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_CORE_VERSION_H_
