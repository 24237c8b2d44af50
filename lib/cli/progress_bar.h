// The progress bar of a long `gpuidle analyze` on a terminal's standard error: bytes of the
// inputs read (compressed bytes for .gz) over their total, redrawn a few times a second, erased
// when done. The caller decides whether there is one (a terminal, no --quiet).
//
//   ProgressBar bar(std::cerr, FileSizes(paths));
//   AnalyzeTraceFilesWithProgress(paths, options,
//                                 [&](size_t i, uint64_t bytes) { bar.Update(i, bytes); });
//   bar.Finish();
#ifndef GPUIDLE_LIB_CLI_PROGRESS_BAR_H_
#define GPUIDLE_LIB_CLI_PROGRESS_BAR_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace gpuidle::internal {

// The sizes of the files, 0 for one that is no regular file (a pipe: its size is unknown).
std::vector<uint64_t> FileSizes(const std::vector<std::string>& paths);

class ProgressBar {
 public:
  // Monotonic nanoseconds; the steady clock by default, a fake in tests.
  using Clock = std::function<int64_t()>;
  // Nothing is drawn before kFirstDrawNs (a short run shows no bar), then at most every
  // kRedrawNs.
  static constexpr int64_t kFirstDrawNs = 500'000'000;
  static constexpr int64_t kRedrawNs = 200'000'000;

  ProgressBar(std::ostream& err, std::vector<uint64_t> file_sizes, Clock clock = nullptr);
  ~ProgressBar() { Finish(); }
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // Input file_index has been read up to file_bytes bytes (the files before it are read).
  void Update(size_t file_index, uint64_t file_bytes);
  // Erases the bar if it was drawn; later updates draw nothing.
  void Finish();

  // The line as drawn now: "gpuidle: reading 2 files [#####.....]  48%  120.0 of 250.0 MiB".
  std::string Line() const;

 private:
  std::ostream& err_;
  std::vector<uint64_t> sizes_;
  Clock clock_;
  int64_t started_ns_;
  int64_t drawn_ns_ = 0;
  bool drawn_ = false;
  bool finished_ = false;
  size_t file_ = 0;
  uint64_t file_bytes_ = 0;
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_CLI_PROGRESS_BAR_H_
