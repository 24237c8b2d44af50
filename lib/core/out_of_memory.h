// Running out of memory on a huge or hostile input is an error for the caller, never an abort of
// the process gpuidle runs in (a Python interpreter, a training job). One rule for every entry
// point that reads, analyses or formats what it is given.
#ifndef GPUIDLE_LIB_CORE_OUT_OF_MEMORY_H_
#define GPUIDLE_LIB_CORE_OUT_OF_MEMORY_H_

#include <new>
#include <stdexcept>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace gpuidle::internal {

// Runs f (returning absl::Status or absl::StatusOr<T>). Memory running out inside it
// (std::bad_alloc, or std::length_error from a container asked to grow past its limit) becomes
// ResourceExhausted with message(), called only then.
template <typename F, typename Message>
auto OutOfMemoryIsAnErrorWith(F&& f, Message&& message) -> decltype(f()) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(message());
  } catch (const std::length_error&) {
    return absl::ResourceExhaustedError(message());
  }
}

// The same with the message "out of memory <what>" ("while formatting the report").
template <typename F>
auto OutOfMemoryIsAnError(absl::string_view what, F&& f) -> decltype(f()) {
  return OutOfMemoryIsAnErrorWith(std::forward<F>(f),
                                  [what] { return absl::StrCat("out of memory ", what); });
}

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_CORE_OUT_OF_MEMORY_H_
