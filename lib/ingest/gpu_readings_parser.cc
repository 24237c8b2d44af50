#include "ingest/gpu_readings_parser.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <type_traits>
#include <utility>
#include <variant>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/text_safety.h"
#include "core/time_units.h"
#include "model/gpu_reading_columns.h"

namespace gpuidle::internal::kineto {
namespace {

using Scalar = GpuReadingsParser::Scalar;
using Table = GpuReadingsParser::Table;

absl::string_view KindName(Scalar k) {
  switch (k) {
    case Scalar::kNull:
      return "null";
    case Scalar::kBool:
      return "a boolean";
    case Scalar::kNumber:
      return "a number";
    case Scalar::kString:
      return "a string";
  }
  return "?";
}

template <typename Row>
std::span<const ReadingColumn<Row>> ColumnsOf();
template <>
std::span<const ReadingColumn<GpuMetricSample>> ColumnsOf() {
  return kGpuMetricColumns;
}
template <>
std::span<const ReadingColumn<GpuProcessSeen>> ColumnsOf() {
  return kGpuProcessColumns;
}
template <>
std::span<const ReadingColumn<GpuThroughputSample>> ColumnsOf() {
  return kGpuThroughputColumns;
}

// Sets the field of `row` that column `c` holds from a cell's text: "" or what is wrong with it.
template <typename Row>
std::string SetCell(const ReadingColumn<Row>& c, Scalar kind, absl::string_view text, Row* row) {
  if constexpr (std::is_same_v<Row, GpuMetricSample>) {
    // null: NVML's clock-event reasons were not read.
    if (c.name == kClockEventsColumn) {
      row->has_clock_events = kind != Scalar::kNull;
      if (kind == Scalar::kNull) return "";
    }
  }
  const auto wrong = [&](absl::string_view expected) {
    return kind == Scalar::kNumber ? absl::StrCat(Shorten(text, 40), " is not ", expected)
                                   : absl::StrCat(KindName(kind), " is not ", expected);
  };
  return std::visit(
      [&](auto member) -> std::string {
        using T = std::remove_reference_t<decltype(row->*member)>;
        if constexpr (std::is_same_v<T, float>) {
          // null: a figure that was not finite, which the writer cannot put in JSON; read as
          // "not measured".
          if (kind == Scalar::kNull) {
            row->*member = -1;
            return "";
          }
          float v = 0;
          if (kind != Scalar::kNumber || !absl::SimpleAtof(text, &v) || !std::isfinite(v)) {
            return wrong("a finite number");
          }
          row->*member = v;
          return "";
        } else {
          if (kind != Scalar::kNumber) return wrong("an integer");
          if constexpr (std::is_same_v<T, uint64_t>) {
            const std::optional<uint64_t> v = ParseUint64(text);
            if (!v) return wrong("an integer in range");
            row->*member = *v;
          } else {
            int64_t lo = std::numeric_limits<T>::min();
            int64_t hi = std::numeric_limits<T>::max();
            if (c.time) {
              lo = kMinTimeNs;
              hi = kMaxTimeNs - 1;
            }
            if (c.device) lo = 0;
            const std::optional<int64_t> v = ParseInt64(text);
            if (!v || *v < lo || *v > hi) {
              return wrong(absl::StrCat("an integer from ", lo, " to ", hi));
            }
            row->*member = static_cast<T>(*v);
          }
          return "";
        }
      },
      c.field);
}

// The index of the column named `key`, or -1.
template <typename Row>
int ColumnIndex(absl::string_view key) {
  const std::span<const ReadingColumn<Row>> columns = ColumnsOf<Row>();
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].name == key) return static_cast<int>(i);
  }
  return -1;
}

template <typename Row>
void SortBy(std::vector<Row>* rows, int64_t Row::*key) {
  std::stable_sort(rows->begin(), rows->end(),
                   [key](const Row& a, const Row& b) { return a.*key < b.*key; });
}

}  // namespace

void GpuReadingsParser::Begin(Table table, absl::string_view key, Timeline* t) {
  t_ = t;
  table_ = table;
  key_ = std::string(key);
  problem_.clear();
  column_ = -1;
  busy_column_ = false;
  columns_seen_ = 0;
  length_ = 0;
  lengths_.clear();
  busy_total_ = 0;
  metrics_.clear();
  processes_.clear();
  throughput_.clear();
}

void GpuReadingsParser::Problem(std::string what) {
  if (problem_.empty()) problem_ = std::move(what);
}

void GpuReadingsParser::Key(int depth, absl::string_view key) {
  if (depth != 1 || !problem_.empty()) return;
  busy_column_ = table_ == Table::kProcesses && key == kBusySamplesColumn;
  column_ = table_ == Table::kMetrics     ? ColumnIndex<GpuMetricSample>(key)
            : table_ == Table::kProcesses ? ColumnIndex<GpuProcessSeen>(key)
                                          : ColumnIndex<GpuThroughputSample>(key);
  if (busy_column_) column_ = static_cast<int>(std::size(kGpuProcessColumns));
  // Columns the reader does not know (a newer writer's) are skipped whatever they hold.
  if (column_ < 0) return;
  const uint64_t bit = uint64_t{1} << column_;
  if ((columns_seen_ & bit) != 0) {
    Problem(absl::StrCat("column \"", key, "\" appears twice"));
  }
  columns_seen_ |= bit;
}

template <typename Row>
Row* GpuReadingsParser::RowAt(std::vector<Row>& rows) {
  if (length_ >= kMaxReadingRows) {
    Problem(absl::StrCat("more than ", kMaxReadingRows, " rows"));
    return nullptr;
  }
  if (rows.size() == length_) rows.emplace_back();
  return &rows[length_];
}

void GpuReadingsParser::Value(int depth, Scalar kind, absl::string_view text) {
  if (!problem_.empty()) {
    if (depth == 0) Finish();
    return;
  }
  if (depth == 0) {
    Problem(absl::StrCat("must be an object of columns, not ", KindName(kind)));
    Finish();
    return;
  }
  if (column_ < 0) return;  // an unknown column's
  const auto column_name = [&]() -> absl::string_view {
    if (busy_column_) return kBusySamplesColumn;
    switch (table_) {
      case Table::kMetrics:
        return kGpuMetricColumns[column_].name;
      case Table::kProcesses:
        return kGpuProcessColumns[column_].name;
      case Table::kThroughput:
        return kGpuThroughputColumns[column_].name;
    }
    return "?";
  };
  if (depth == 1) {
    Problem(absl::StrCat("column \"", column_name(), "\" must be an array, not ", KindName(kind)));
    return;
  }
  const size_t row = length_;  // for the message: a cell read counts it
  std::string wrong;
  if (busy_column_) {
    if (depth == 2) {
      wrong = absl::StrCat(KindName(kind), " is not an array of time stamps");
    } else if (busy_total_ >= kMaxReadingRows) {
      Problem(absl::StrCat("more than ", kMaxReadingRows, " busy samples"));
      return;
    } else {
      // A time stamp, as first_seen_ns is.
      GpuProcessSeen parsed;
      static constexpr ReadingColumn<GpuProcessSeen> kBusy = {
          kBusySamplesColumn, &GpuProcessSeen::first_seen_ns, /*time=*/true};
      wrong = SetCell(kBusy, kind, text, &parsed);
      if (wrong.empty()) {
        processes_[length_].busy_sample_ns.push_back(parsed.first_seen_ns);
        ++busy_total_;
        return;
      }
    }
  } else if (depth == 2) {
    const auto set = [&](auto& rows, const auto& column) {
      auto* row = RowAt(rows);
      if (row == nullptr) return;
      wrong = SetCell(column, kind, text, row);
      ++length_;
    };
    switch (table_) {
      case Table::kMetrics:
        set(metrics_, kGpuMetricColumns[column_]);
        break;
      case Table::kProcesses:
        set(processes_, kGpuProcessColumns[column_]);
        break;
      case Table::kThroughput:
        set(throughput_, kGpuThroughputColumns[column_]);
        break;
    }
  } else {
    wrong = "nested too deep";
  }
  if (!wrong.empty()) {
    Problem(absl::StrCat("column \"", column_name(), "\", row ", row, ": ", wrong));
  }
}

void GpuReadingsParser::Start(int depth, bool object) {
  if (!problem_.empty()) return;
  if (depth == 0) {
    if (!object) Problem("must be an object of columns, not an array");
    return;
  }
  if (column_ < 0) return;  // an unknown column holds what it likes
  if (depth == 1) {
    if (object) Problem("a column must be an array, not an object");
    length_ = 0;
    return;
  }
  if (depth == 2 && busy_column_ && !object) {
    RowAt(processes_);  // the process whose busy samples follow
    return;
  }
  Problem(absl::StrCat("column ", column_, ", row ", length_, ": nested too deep"));
}

void GpuReadingsParser::End(int depth) {
  if (depth == 0) {
    Finish();
    return;
  }
  if (!problem_.empty() || column_ < 0) {
    if (depth == 1) column_ = -1;
    return;
  }
  if (depth == 2 && busy_column_) {
    ++length_;
  } else if (depth == 1) {
    lengths_.push_back(length_);
    column_ = -1;
    busy_column_ = false;
  }
}

void GpuReadingsParser::Finish() {
  if (problem_.empty() && !lengths_.empty() &&
      std::any_of(lengths_.begin(), lengths_.end(),
                  [&](size_t n) { return n != lengths_.front(); })) {
    const auto [shortest, longest] = std::minmax_element(lengths_.begin(), lengths_.end());
    Problem(absl::StrCat("its columns differ in length (", *shortest, " to ", *longest, ")"));
  }
  const size_t rows = lengths_.empty() ? 0 : lengths_.front();
  if (problem_.empty()) {
    switch (table_) {
      case Table::kMetrics:
        metrics_.resize(rows);
        SortBy(&metrics_, &GpuMetricSample::time_ns);
        t_->gpu_metrics = std::move(metrics_);
        break;
      case Table::kProcesses:
        processes_.resize(rows);
        for (GpuProcessSeen& p : processes_) {
          if (p.first_seen_ns > p.last_seen_ns) {
            Problem(absl::StrCat("a process (pid ", p.pid, ") last seen before it was first seen"));
            break;
          }
        }
        if (problem_.empty()) t_->gpu_processes = std::move(processes_);
        break;
      case Table::kThroughput:
        throughput_.resize(rows);
        for (const GpuThroughputSample& s : throughput_) {
          if (s.start_ns > s.end_ns) {
            Problem("a sample ends before it starts");
            break;
          }
        }
        if (problem_.empty()) {
          SortBy(&throughput_, &GpuThroughputSample::start_ns);
          t_->gpu_throughput = std::move(throughput_);
        }
        break;
    }
  }
  if (!problem_.empty()) {
    t_->info.warnings.push_back(
        absl::StrCat("the trace's device readings \"", key_, "\" were not read: ", problem_));
  }
  Begin(table_, key_, t_);  // frees what was read
}

}  // namespace gpuidle::internal::kineto
