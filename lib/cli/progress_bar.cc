#include "cli/progress_bar.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gpuidle::internal {
namespace {

constexpr size_t kBarCells = 24;
// Erases the line: back to its start, then clear to its end.
constexpr char kEraseLine[] = "\r\x1b[K";

int64_t SteadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string Mib(uint64_t bytes) {
  return absl::StrFormat("%.1f", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

}  // namespace

std::vector<uint64_t> FileSizes(const std::vector<std::string>& paths) {
  std::vector<uint64_t> sizes;
  for (const std::string& p : paths) {
    struct stat st {};
    const bool regular = ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
    sizes.push_back(regular ? static_cast<uint64_t>(st.st_size) : 0);
  }
  return sizes;
}

ProgressBar::ProgressBar(std::ostream& err, std::vector<uint64_t> file_sizes, Clock clock)
    : err_(err),
      sizes_(std::move(file_sizes)),
      clock_(clock ? std::move(clock) : Clock(SteadyNs)),
      started_ns_(clock_()) {}

std::string ProgressBar::Line() const {
  // A pipe among the inputs: no total to show a share of.
  const bool known = !sizes_.empty() &&
                     std::all_of(sizes_.begin(), sizes_.end(), [](uint64_t s) { return s > 0; });
  uint64_t done = 0, total = 0;
  for (size_t i = 0; i < sizes_.size(); ++i) {
    total += sizes_[i];
    if (i < file_) done += sizes_[i];
    if (i == file_) done += known ? std::min(file_bytes_, sizes_[i]) : file_bytes_;
  }
  std::string line = absl::StrCat(
      "gpuidle: reading ", sizes_.size() == 1 ? "1 file" : absl::StrCat(sizes_.size(), " files"));
  if (!known) return absl::StrCat(line, "  ", Mib(done), " MiB");
  const double share = total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 1;
  const size_t full = static_cast<size_t>(share * kBarCells);
  return absl::StrFormat("%s [%s%s] %3.0f%%  %s of %s MiB", line, std::string(full, '#'),
                         std::string(kBarCells - full, '.'), 100 * share, Mib(done), Mib(total));
}

void ProgressBar::Update(size_t file_index, uint64_t file_bytes) {
  if (finished_) return;
  file_ = file_index;
  file_bytes_ = file_bytes;
  const int64_t now = clock_();
  if (now - started_ns_ < kFirstDrawNs) return;
  if (drawn_ && now - drawn_ns_ < kRedrawNs) return;
  err_ << kEraseLine << Line() << std::flush;
  drawn_ = true;
  drawn_ns_ = now;
}

void ProgressBar::Finish() {
  if (finished_) return;
  finished_ = true;
  if (drawn_) err_ << kEraseLine << std::flush;
}

}  // namespace gpuidle::internal
