#include "analysis/job_checks.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gpuidle::internal {
namespace {

constexpr size_t kMaxRuns = 20;

std::string Run(int first, int last) {
  return first == last ? absl::StrCat(first) : absl::StrCat(first, "-", last);
}

// "1, 3-5, 9": ranks in runs, at most kMaxRuns runs then "...".
std::string RankList(const std::vector<int>& ranks) {
  std::vector<std::string> runs;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (runs.size() == kMaxRuns) {
      runs.push_back("...");
      break;
    }
    runs.push_back(Run(ranks[i], ranks[j]));
    i = j + 1;
  }
  return absl::StrJoin(runs, ", ");
}

// The ranks of [0, world) that `given` lacks, as RankList writes them; time and memory grow
// with the ranks given, not with world (a world_size of 2^31 is one number in a file).
std::string MissingRankList(const std::set<int>& given, int world) {
  std::vector<std::string> runs;
  int next = 0;  // the first rank not yet covered
  const auto add = [&](int first, int last) {
    if (runs.size() >= kMaxRuns) {
      if (runs.size() == kMaxRuns) runs.push_back("...");
      return;
    }
    runs.push_back(Run(first, last));
  };
  for (int rank : given) {
    if (rank >= world) break;
    if (rank < 0) continue;
    if (rank > next) add(next, rank - 1);
    next = rank + 1;
  }
  if (next < world) add(next, world - 1);
  return absl::StrJoin(runs, ", ");
}

// Milliseconds with three decimals, exact.
std::string Milliseconds(int64_t ns) {
  const uint64_t abs = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  std::string frac = absl::StrCat(abs / 1000 % 1000 + 1000).substr(1);
  return absl::StrCat(ns < 0 ? "-" : "", abs / 1000000, ".", frac);
}

}  // namespace

std::vector<std::string> CheckJob(const std::vector<JobMember>& members,
                                  const std::vector<std::string>& names) {
  std::vector<std::string> warnings;
  if (members.size() < 2) return warnings;
  const auto name = [&](size_t i) {
    return i < names.size() ? names[i] : absl::StrCat("input #", i + 1);
  };

  // Duplicate ranks.
  std::map<int, std::vector<size_t>> by_rank;
  for (size_t i = 0; i < members.size(); ++i) {
    if (members[i].rank) by_rank[*members[i].rank].push_back(i);
  }
  for (const auto& [rank, inputs] : by_rank) {
    if (inputs.size() < 2) continue;
    std::vector<std::string> which;
    for (size_t i : inputs) which.push_back(name(i));
    warnings.push_back(absl::StrCat(inputs.size(), " inputs claim rank ", rank, ": ",
                                    absl::StrJoin(which, ", "),
                                    "; cross-rank results pair them as different ranks"));
  }

  // Windows that do not overlap: the latest start against the earliest end.
  std::optional<size_t> latest_start, earliest_end;
  for (size_t i = 0; i < members.size(); ++i) {
    if (!members[i].start_ns || !members[i].end_ns) continue;
    if (!latest_start || *members[i].start_ns > *members[*latest_start].start_ns) latest_start = i;
    if (!earliest_end || *members[i].end_ns < *members[*earliest_end].end_ns) earliest_end = i;
  }
  if (latest_start && earliest_end && *latest_start != *earliest_end &&
      *members[*latest_start].start_ns >= *members[*earliest_end].end_ns) {
    const int64_t gap_ns = *members[*latest_start].start_ns - *members[*earliest_end].end_ns;
    warnings.push_back(absl::StrCat(
        "the traces do not overlap in time: ", name(*earliest_end), " ends ", Milliseconds(gap_ns),
        " ms before ", name(*latest_start),
        " begins; they are probably not one job, or their clocks differ (cross-rank results "
        "compare times across them)"));
  }

  // World size, and the ranks missing from it.
  std::set<int> world_sizes;
  for (const JobMember& m : members) {
    if (m.world_size) world_sizes.insert(*m.world_size);
  }
  if (world_sizes.size() > 1) {
    std::vector<int> sizes(world_sizes.begin(), world_sizes.end());
    warnings.push_back(absl::StrCat("the traces disagree on world_size (",
                                    absl::StrJoin(sizes, ", "), "): not one job"));
  } else if (world_sizes.size() == 1) {
    const int world = *world_sizes.begin();
    std::set<int> given;
    std::vector<int> outside;
    for (const auto& [rank, inputs] : by_rank) {
      if (rank >= world) {
        outside.push_back(rank);
      } else if (rank >= 0) {
        given.insert(rank);
      }
    }
    const int64_t missing = int64_t{world} - static_cast<int64_t>(given.size());
    if (missing > 0) {
      warnings.push_back(absl::StrCat(
          "world_size is ", world, " but ", given.size(), " of its ranks are given; missing: rank",
          missing == 1 ? " " : "s ", MissingRankList(given, world),
          " (waits for peers are then underestimated: a missing rank may be the one the others "
          "waited for)"));
    }
    if (!outside.empty()) {
      warnings.push_back(absl::StrCat("rank", outside.size() == 1 ? " " : "s ", RankList(outside),
                                      outside.size() == 1 ? " lies" : " lie",
                                      " outside world_size ", world));
    }
  }
  return warnings;
}

}  // namespace gpuidle::internal
