// libFuzzer harness (f): gpuidle's JSON reports read back (ingest/report_reader.h), the input of
// `gpuidle analyze report.*.json`.
//
// A report read from the input is written as JSON and read back: it must read, and give the same
// JSON again (the writer's output is a fixed point of the pair). Errors are short. What reads is
// also written as text, diffed with itself and merged with a copy of itself as another rank
// (issue 29: report figures overflowed in the merge, the diff and the writers), each under the
// sanitizers and the per-input time limit of cmake/ci_fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <string>

#include "analysis/rank_merge.h"
#include "analysis/report_diff.h"
#include "core/text_safety.h"
#include "fuzz_support.h"
#include "ingest/report_reader.h"
#include "report/diff_writer.h"
#include "report/writer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<gpuidle::Report> r = gpuidle::internal::ParseReportJson(bytes, "fuzz.json");
  if (!r.ok()) {
    gpuidle::fuzz::CheckMessage(r.status().message());
    return 0;
  }
  const std::string written = gpuidle::internal::MakeJsonWriter()->Write(*r);
  GPUIDLE_FUZZ_CHECK(gpuidle::internal::IsValidUtf8(written));
  absl::StatusOr<gpuidle::Report> back = gpuidle::internal::ParseReportJson(written, "again.json");
  GPUIDLE_FUZZ_CHECK(back.ok(),
                     back.status().ToString() + "\n--- written:\n" + written.substr(0, 2000));
  const std::string again = gpuidle::internal::MakeJsonWriter()->Write(*back);
  GPUIDLE_FUZZ_CHECK(again == written, "\n--- first:\n" + written.substr(0, 2000) +
                                           "\n--- again:\n" + again.substr(0, 2000));

  GPUIDLE_FUZZ_CHECK(
      gpuidle::internal::IsValidUtf8(gpuidle::internal::MakeTextWriter()->Write(*r)));
  gpuidle::internal::WriteDiffText(gpuidle::internal::DiffReports(*r, *back));
  if (r->ranks.size() <= 1) {
    // The same report as the next rank: every row relabelled, so that the merge pairs them.
    gpuidle::Report other = *r;
    const int rank = r->ranks.empty() ? 0 : r->ranks.front().rank;
    const int next = rank == INT32_MAX ? rank - 1 : rank + 1;
    for (auto& k : other.ranks) k.rank = next;
    for (auto& d : other.devices) d.rank = next;
    for (auto& s : other.steps) s.rank = next;
    for (auto& g : other.longest_gaps) g.rank = next;
    for (auto& v : other.visible_devices) v.rank = next;
    absl::StatusOr<gpuidle::Report> job =
        gpuidle::internal::MergeRanks({*r, std::move(other)}, {"a.json", "b.json"}, r->options);
    if (job.ok()) {
      const std::string merged = gpuidle::internal::MakeJsonWriter()->Write(*job);
      GPUIDLE_FUZZ_CHECK(gpuidle::internal::IsValidUtf8(merged));
      gpuidle::internal::MakeTextWriter()->Write(*job);
    } else {
      gpuidle::fuzz::CheckMessage(job.status().message());
    }
  }
  return 0;
}
