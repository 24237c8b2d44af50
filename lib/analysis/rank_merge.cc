#include "analysis/rank_merge.h"

#include <utility>

namespace gpuidle::internal {

absl::StatusOr<Report> MergeRanks(std::vector<Report> ranks, const std::vector<std::string>& names,
                                  const AnalysisOptions& options) {
  (void)names;
  (void)options;
  if (ranks.empty()) return absl::InvalidArgumentError("nothing to merge");
  return std::move(ranks.front());
}

}  // namespace gpuidle::internal
