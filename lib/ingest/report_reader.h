// Reads gpuidle's own JSON reports (docs/REPORT_SCHEMA.md) back into a Report, so that a job is
// merged from its small per-rank reports (`gpuidle analyze report.*.json`) as well as from its
// traces.
//
// Everything the JSON writer writes is read back: writing what was read gives the same bytes
// (tests/ingest/report_reader_test.cc). Fields the writer derives (idle_by_cause, idle_ns of a
// step, lost_ns, completeness.status, the top-level start_up / wind_down, ...) are not read;
// fields added to the schema since the first reports of gpuidle.report/2 (step_count,
// steps_not_listed, a step's one_off_ns, and those of issue 16: collectives, ranks, ...) may be
// missing. Unknown
// fields are ignored.
//
// Hostile input: a wrong type, a value out of range or a missing field is an error that names
// the file and the field ("r.json: devices[1].collective_timings.kind[7]: ..."); never a crash.
// The timeline's rules hold on read, each broken one named with its field: time stamps in the
// timelines' range and lengths of time within 2^52 ns (model/timeline.h), every span ending at or
// after its start, counts not negative, shares within 0 to 1, parts within their whole (comm_ns
// within busy_ns, matched within collectives), conservation per device (the phases tile the
// window; busy, idle and one-off time tile the steady state and each step), and every sum within
// kMaxReportSum.
// Memory and time are bounded by the limits below; the JSON is parsed without recursion.
#ifndef GPUIDLE_LIB_INGEST_REPORT_READER_H_
#define GPUIDLE_LIB_INGEST_REPORT_READER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gpuidle/report.h"
#include "ingest/byte_source.h"
#include "ingest/kineto_reader.h"
#include "model/report_names.h"
#include "model/timeline.h"

namespace gpuidle::internal {

// The schema read, and the prefix that tells a report from a trace: kReportSchema and
// kReportSchemaPrefix (model/report_names.h).

// A report longer than this (inflated) is refused: a rank's report is a few hundred KB; one with
// 1024 devices' full collective tables is about 200 MB.
inline constexpr size_t kMaxReportBytes = size_t{256} << 20;
// JSON values (numbers, strings, array and object entries) at most; the parsed document costs
// 16 bytes per value, so this bounds it to 512 MiB.
inline constexpr size_t kMaxReportValues = size_t{1} << 25;
// A report's strings are the traces' kept strings (kMaxKeptStringBytes), sometimes two of them
// joined ("aten::item at train.py(42)"); a longer one is an error.
inline constexpr size_t kMaxReportStringBytes = 16 * kMaxKeptStringBytes;
// Devices of one report (a merged report holds every rank's).
inline constexpr size_t kMaxReportDevices = 64 * kMaxDevicesPerTrace;
// Rows of any other list (gaps, offenders, warnings, ranks, ...), at most. Steps are at most
// Report::kMaxStepRows and collective timings DeviceReport::kMaxCollectiveRows per device, as
// the analysis writes them.
inline constexpr size_t kMaxReportListRows = size_t{1} << 20;

// Parses a report's JSON. `name` (the file) starts every error message. Errors are
// InvalidArgument (not JSON, not a report, a field missing or of the wrong type, a schema this
// version does not read) or ResourceExhausted (beyond the limits above).
absl::StatusOr<Report> ParseReportJson(absl::string_view json, absl::string_view name);

// The same for a file, plain or gzip-compressed (recognised by content).
absl::StatusOr<Report> ReadReportFile(const std::string& path);

// True if these first bytes of a file (inflated) are a gpuidle JSON report: an object whose first
// key is "schema" with a value starting with kReportSchemaPrefix, as the writer writes it.
bool LooksLikeReportJson(absl::string_view head);

// A file given to `gpuidle analyze`: a report (LooksLikeReportJson) or a trace (ReadTraceFile),
// opened once (a pipe is read once).
struct InputFile {
  std::optional<Report> report;  // set for a report
  Timeline trace;                // otherwise
};
// progress, if given, is told how far a trace has been read (ingest/byte_source.h).
absl::StatusOr<InputFile> ReadInputFile(const std::string& path,
                                        const ReadProgress& progress = nullptr);

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_INGEST_REPORT_READER_H_
