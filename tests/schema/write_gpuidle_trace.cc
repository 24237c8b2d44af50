// Writes a fresh gpuidle trace for the schema tests (tests/schema/test_schemas.py): the trace
// file read, analysed with the default options, and written back by the trace writer with the
// report's gaps drawn, to stdout.
//
//   write_gpuidle_trace TRACE.json[.gz] > written.trace.json
#include <cstdio>
#include <iostream>
#include <string>

#include "absl/status/statusor.h"
#include "analysis/analyze.h"
#include "gpuidle/options.h"
#include "gpuidle/report.h"
#include "ingest/read_trace.h"
#include "model/timeline.h"
#include "report/trace_writer.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_gpuidle_trace TRACE.json[.gz] > written.trace.json\n");
    return 2;
  }
  const absl::StatusOr<gpuidle::internal::Timeline> timeline =
      gpuidle::internal::ReadTraceFile(argv[1]);
  if (!timeline.ok()) {
    std::fprintf(stderr, "write_gpuidle_trace: %s\n", timeline.status().ToString().c_str());
    return 3;
  }
  const absl::StatusOr<gpuidle::internal::AnalysisWithGaps> analysis =
      gpuidle::internal::AnalyzeWithGaps(*timeline, gpuidle::AnalysisOptions{},
                                         gpuidle::internal::TraceOptions::kDefaultMaxGaps);
  if (!analysis.ok()) {
    std::fprintf(stderr, "write_gpuidle_trace: %s\n", analysis.status().ToString().c_str());
    return 3;
  }
  std::cout << gpuidle::internal::FormatGpuidleTrace(*timeline, &analysis->report, &analysis->gaps);
  return std::cout.flush() ? 0 : 4;
}
