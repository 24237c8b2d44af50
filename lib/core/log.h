// gpuidle's lines on the host program's stderr, from inside that program (the session, the
// injected library, the sampled windows). The command-line tool writes to its own streams.
#ifndef GPUIDLE_LIB_CORE_LOG_H_
#define GPUIDLE_LIB_CORE_LOG_H_

#include "absl/strings/string_view.h"

namespace gpuidle::internal {

// Prints "gpuidle: warning: <message>" as one line on stderr.
void Warn(absl::string_view message);
// Prints "gpuidle: <message>" as one line on stderr.
void Note(absl::string_view message);
// Prints prefix and message, then a newline, on stderr in one write.
void WriteStderrLine(absl::string_view prefix, absl::string_view message);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_CORE_LOG_H_
