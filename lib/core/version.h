#ifndef GPUIDLE_LIB_CORE_VERSION_H_
#define GPUIDLE_LIB_CORE_VERSION_H_

namespace gpuidle::internal {

// From project(VERSION) in CMakeLists.txt.
inline constexpr char kVersion[] = GPUIDLE_VERSION_STRING;

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_CORE_VERSION_H_
