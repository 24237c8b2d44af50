// Names of the output files of live collection, which tell ranks and processes apart
// (core/output_file.h writes them).
//
//   const ProcessIdentity id = CurrentProcessIdentity();
//   GPUIDLE_ASSIGN_OR_RETURN(std::string path, ExpandOutputPath("gpuidle.%r.json", id));
#ifndef GPUIDLE_LIB_CORE_OUTPUT_PATH_H_
#define GPUIDLE_LIB_CORE_OUTPUT_PATH_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpuidle::internal {

// Who is writing: the values of the output-name placeholders.
struct ProcessIdentity {
  int64_t pid = 0;
  std::string rank = "0";
  std::string host;
  bool rank_known = false;  // a launcher set one of the rank variables
};

// This process: getpid(), the first non-empty of RANK, OMPI_COMM_WORLD_RANK, PMI_RANK,
// SLURM_PROCID (else "0"), gethostname().
ProcessIdentity CurrentProcessIdentity();

// Replaces %p (pid), %r (rank), %h (host) and %% (a percent sign) in pattern. A '/' in a
// substituted value becomes '_' (as does a value of only dots), so that a value never adds or
// climbs directories. An unknown placeholder
// or a trailing '%' is InvalidArgument naming it.
absl::StatusOr<std::string> ExpandOutputPath(absl::string_view pattern, const ProcessIdentity& id);

// Where WriteOutputFile (IfExists::kUseAnotherName) puts the report when path exists: ".<pid>"
// (attempt 1) or ".<pid>-<n>" (attempt n) inserted before the extension: "report.json" ->
// "report.12345.json", "trace.json.gz" -> "trace.12345.json.gz" (a compression suffix keeps the
// extension before it), "report" -> "report.12345". Attempt 0 is path itself.
std::string AlternativeOutputPath(const std::string& path, int64_t pid, int attempt);

// path with "." + tag inserted before its extension, by the same rule: ("report.json",
// "partial") -> "report.partial.json".
std::string TaggedOutputPath(const std::string& path, absl::string_view tag);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_CORE_OUTPUT_PATH_H_
