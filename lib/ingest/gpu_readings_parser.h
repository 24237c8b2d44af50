// The device readings of a gpuidle trace's "gpuidle" object ("gpu_metrics", "gpu_processes",
// "gpu_throughput": objects of equally long columns, model/gpu_reading_columns.h), read from the
// SAX events the KinetoHandler passes on. The readings are evidence next to the timeline, not
// part of it: a table that is malformed, or longer than the reader takes, is dropped whole with
// one warning, and the rest of the trace reads as ever (docs/TRACE_FORMAT.md, "Device
// readings").
#ifndef GPUIDLE_LIB_INGEST_GPU_READINGS_PARSER_H_
#define GPUIDLE_LIB_INGEST_GPU_READINGS_PARSER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "model/timeline.h"

namespace gpuidle::internal::kineto {

// Rows beyond this in one table, or process busy samples beyond this in all, drop the table:
// a live capture keeps far fewer (36,000 NVML readings), and memory stays bounded.
inline constexpr size_t kMaxReadingRows = size_t{1} << 20;

class GpuReadingsParser {
 public:
  enum class Table : uint8_t { kMetrics, kProcesses, kThroughput };
  enum class Scalar : uint8_t { kNull, kBool, kNumber, kString };

  // A table's key was read; its value follows, and its rows go into `t` when it ends (sorted by
  // time), or one warning in t->info.warnings says why not. `depth` below counts from that
  // value (0), so a column's key is at 1, its cells at 2, a process's busy samples at 3; a
  // container's End has the depth of its Start.
  void Begin(Table table, absl::string_view key, Timeline* t);
  void Key(int depth, absl::string_view key);
  void Value(int depth, Scalar kind, absl::string_view text);
  void Start(int depth, bool object);
  void End(int depth);

 private:
  void Problem(std::string what);
  void Finish();
  // The row the next cell of the current column goes into (added where the column is the
  // longest so far); nullptr past the limit.
  template <typename Row>
  Row* RowAt(std::vector<Row>& rows);

  Timeline* t_ = nullptr;
  Table table_ = Table::kMetrics;
  std::string key_;      // the table's key, for warnings
  std::string problem_;  // the first one; the table is dropped
  int column_ = -1;      // the column being read; -1: an unknown one (skipped)
  bool busy_column_ = false;
  uint64_t columns_seen_ = 0;    // bit per column (and the busy column's)
  size_t length_ = 0;            // of the column being read
  std::vector<size_t> lengths_;  // of the columns read so far
  size_t busy_total_ = 0;
  std::vector<GpuMetricSample> metrics_;
  std::vector<GpuProcessSeen> processes_;
  std::vector<GpuThroughputSample> throughput_;
};

}  // namespace gpuidle::internal::kineto

#endif  // GPUIDLE_LIB_INGEST_GPU_READINGS_PARSER_H_
