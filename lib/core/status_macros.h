// Status helpers that the Abseil release on Debian 12 (20220623) does not ship.
//
//   absl::StatusOr<Timeline> Load(...) {
//     GPUIDLE_ASSIGN_OR_RETURN(std::string text, ReadAll(path));
//     GPUIDLE_RETURN_IF_ERROR(Check(text));
//     ...
//   }
#ifndef GPUIDLE_LIB_CORE_STATUS_MACROS_H_
#define GPUIDLE_LIB_CORE_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define GPUIDLE_RETURN_IF_ERROR(expr)                                   \
  do {                                                                  \
    if (absl::Status gpuidle_status_ = (expr); !gpuidle_status_.ok()) { \
      return gpuidle_status_;                                           \
    }                                                                   \
  } while (false)

#define GPUIDLE_STATUS_CONCAT_INNER_(a, b) a##b
#define GPUIDLE_STATUS_CONCAT_(a, b) GPUIDLE_STATUS_CONCAT_INNER_(a, b)

#define GPUIDLE_ASSIGN_OR_RETURN(lhs, expr) \
  GPUIDLE_ASSIGN_OR_RETURN_IMPL_(GPUIDLE_STATUS_CONCAT_(gpuidle_statusor_, __LINE__), lhs, expr)

#define GPUIDLE_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                   \
  if (!statusor.ok()) return std::move(statusor).status();  \
  lhs = std::move(statusor).value()

#endif  // GPUIDLE_LIB_CORE_STATUS_MACROS_H_
