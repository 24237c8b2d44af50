// Microbenchmark of the Kineto JSON reader alone (no file system, no analysis), on recorded
// traces held in memory, next to the floor: RapidJSON's own SAX parse of the same bytes with
// a handler that does nothing. Reports bytes per second; use it to see where parse time goes.
//
//   build/bin/reader_benchmark [--benchmark_repetitions=5 ...]
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "ingest/byte_source.h"
#include "ingest/kineto_reader.h"
#include "rapidjson/reader.h"

namespace gpuidle::internal {
namespace {

std::string Inflate(const std::string& path) {
  std::string text;
  gzFile in = gzopen(path.c_str(), "rb");
  if (in == nullptr) return text;
  char buffer[1 << 16];
  int n = 0;
  while ((n = gzread(in, buffer, sizeof(buffer))) > 0) text.append(buffer, static_cast<size_t>(n));
  gzclose(in);
  return text;
}

const std::string& Trace(const char* name) {
  static std::string tiny =
      Inflate(absl::StrCat(GPUIDLE_TEST_DATA_DIR, "/traces/torch/tiny_mlp_launch_bound.json.gz"));
  static std::string resnet =
      Inflate(absl::StrCat(GPUIDLE_TEST_DATA_DIR, "/traces/torch/mixed_resnet.json.gz"));
  return std::strcmp(name, "tiny") == 0 ? tiny : resnet;
}

// The bytes of a string, handed out as a file would be: in reads of at most 1 MB.
class MemorySource : public ByteSource {
 public:
  explicit MemorySource(const std::string& text) : text_(text) {}
  absl::StatusOr<size_t> Read(char* buffer, size_t n) override {
    const size_t k = std::min(n, text_.size() - pos_);
    std::memcpy(buffer, text_.data() + pos_, k);
    pos_ += k;
    return k;
  }
  uint64_t file_bytes_read() const override { return pos_; }

 private:
  const std::string& text_;
  size_t pos_ = 0;
};

void BM_ReadKinetoTrace(benchmark::State& state, const char* name) {
  const std::string& text = Trace(name);
  if (text.empty()) {
    state.SkipWithError("test trace not found");
    return;
  }
  for (auto _ : state) {
    MemorySource source(text);
    absl::StatusOr<Timeline> timeline = ReadKinetoTrace(source);
    if (!timeline.ok()) {
      state.SkipWithError(std::string(timeline.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(timeline->calls.size());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(text.size()));
}

// The floor: RapidJSON parsing the same bytes from memory, numbers as text, doing nothing.
void BM_RapidJsonNullHandler(benchmark::State& state, const char* name) {
  const std::string& text = Trace(name);
  if (text.empty()) {
    state.SkipWithError("test trace not found");
    return;
  }
  for (auto _ : state) {
    rapidjson::StringStream stream(text.c_str());
    rapidjson::BaseReaderHandler<> handler;
    rapidjson::Reader reader;
    const rapidjson::ParseResult ok =
        reader.Parse<rapidjson::kParseNumbersAsStringsFlag>(stream, handler);
    if (!ok) {
      state.SkipWithError("parse error");
      return;
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(text.size()));
}

BENCHMARK_CAPTURE(BM_ReadKinetoTrace, tiny_mlp, "tiny")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ReadKinetoTrace, mixed_resnet, "resnet")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RapidJsonNullHandler, tiny_mlp, "tiny")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RapidJsonNullHandler, mixed_resnet, "resnet")->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gpuidle::internal

BENCHMARK_MAIN();
