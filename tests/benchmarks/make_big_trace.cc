// make_big_trace: writes a large, realistic PyTorch profiler (Kineto) trace by repeating the
// events of real recorded traces, for the parse benchmark (docs/PERFORMANCE.md).
//
//   make_big_trace [--size-mb N] [--out PATH.json] [--gzip-out PATH.json.gz] [SOURCE...]
//
// SOURCE files (plain or gzip Kineto JSON; default: the recorded H200 traces
// tiny_mlp_launch_bound and mixed_resnet under tests/data/traces/torch) are read whole (a few
// MB each). Their traceEvents are then written in blocks, round-robin over the sources, until
// the output reaches N MB (10^6 bytes; default 300). Block k of a source is that source's
// events with
//   - every "ts" shifted so that the block starts where the previous block ended (blocks follow
//     each other on the timeline, each the original span long),
//   - every "External id", "correlation" (args) and flow "id" offset by k * stride, where
//     stride exceeds every id of every source, so ids stay unique and flows still link,
//   - "ProfilerStep#N" renamed to "ProfilerStep#(N + steps before)", so steps stay distinct.
// Everything else is the recorded text byte for byte, so the output keeps PyTorch's formatting
// (its header, one multi-line event after another, its trailer). Metadata events (ph "M"),
// instant events (ph "i") and the profiler's own "Trace" span are written once per source, at
// the end, as Kineto does. The output is streamed: memory holds the sources, never the output.
// --out and --gzip-out may be given together (one pass writes both); "-" is stdout.
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "rapidjson/error/en.h"
#include "rapidjson/reader.h"

namespace {

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "make_big_trace: %s\n", message.c_str());
  std::exit(1);
}

std::string ReadWholeFile(const std::string& path) {
  gzFile in = gzopen(path.c_str(), "rb");  // reads plain files too
  if (in == nullptr) Die(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    const int n = gzread(in, buffer, sizeof(buffer));
    if (n < 0) Die(absl::StrCat("cannot read ", path));
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  gzclose(in);
  return text;
}

// A number of microseconds as Kineto writes it ("5173086258035.026") in integer nanoseconds,
// plus the digits beyond the nanosecond, kept verbatim.
struct Micros {
  int64_t ns = 0;
  absl::string_view extra;
};

std::optional<Micros> ParseMicros(absl::string_view s) {
  const size_t dot = s.find('.');
  absl::string_view whole = s.substr(0, dot);
  absl::string_view frac = dot == absl::string_view::npos ? "" : s.substr(dot + 1);
  if (whole.empty() || frac.find_first_not_of("0123456789") != absl::string_view::npos) {
    return std::nullopt;
  }
  int64_t us = 0;
  if (!absl::SimpleAtoi(whole, &us) || us < 0) return std::nullopt;
  int64_t sub = 0;
  for (size_t i = 0; i < 3; ++i) sub = sub * 10 + (i < frac.size() ? frac[i] - '0' : 0);
  Micros m;
  m.ns = us * 1000 + sub;
  m.extra = frac.size() > 3 ? frac.substr(3) : "";
  return m;
}

void AppendMicros(int64_t ns, absl::string_view extra, std::string* out) {
  char buf[48];
  const int n = std::snprintf(buf, sizeof(buf), "%" PRId64 ".%03" PRId64, ns / 1000, ns % 1000);
  out->append(buf, static_cast<size_t>(n));
  out->append(extra.data(), extra.size());
}

enum class PatchKind : uint8_t { kTs, kId, kStep };

// A value in the source text that changes from block to block.
struct Patch {
  uint32_t offset;  // into the source text
  uint32_t length;
  PatchKind kind;
};

struct SourceEvent {
  uint32_t begin, end;  // the event's text: [begin, end) from '{' to '}'
  uint32_t first_patch, patch_count;
  bool tail;  // metadata, instant or profiler span: written once, at the end
};

struct Source {
  std::string path;
  std::string text;
  std::vector<SourceEvent> events;
  std::vector<Patch> patches;
  int64_t base_ns = 0;                                // baseTimeNanoseconds
  int64_t first_ns = INT64_MAX, last_ns = INT64_MIN;  // span of the repeated events
  int64_t max_id = 0;
  int64_t max_step = 0;
};

// The source text as a RapidJSON stream. Unlike rapidjson::StringStream, which the reader
// copies while it parses a string or a number, this one is used in place, so Tell() in a
// callback is the offset just past the value.
class TextStream {
 public:
  using Ch = char;
  explicit TextStream(const char* text) : head_(text), cur_(text) {}
  Ch Peek() const { return *cur_; }
  Ch Take() { return *cur_++; }
  size_t Tell() const { return static_cast<size_t>(cur_ - head_); }
  Ch* PutBegin() { return nullptr; }
  void Put(Ch) {}
  void Flush() {}
  size_t PutEnd(Ch*) { return 0; }

 private:
  const char* head_;
  const char* cur_;
};

// Finds every event of traceEvents, its extent in the text and the values to patch.
class IndexHandler : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, IndexHandler> {
 public:
  IndexHandler(Source* s, const TextStream* stream) : s_(*s), stream_(*stream) {}

  bool Key(const char* k, rapidjson::SizeType n, bool) {
    key_.assign(k, n);
    if (depth_ == 1) top_key_ = key_;
    return true;
  }
  bool StartObject() {
    if (InEvents() && depth_ == 2) {
      event_ = SourceEvent{};
      event_.begin = Pos() - 1;
      event_.first_patch = static_cast<uint32_t>(s_.patches.size());
      ph_.clear();
      cat_.clear();
      ts_.reset();
      dur_.reset();
    }
    if (depth_ == 3 && InEvents() && key_ == "args") in_args_ = true;
    ++depth_;
    key_.clear();
    return true;
  }
  bool EndObject(rapidjson::SizeType) {
    --depth_;
    if (depth_ == 3) in_args_ = false;
    if (InEvents() && depth_ == 2) FinishEvent();
    return true;
  }
  bool StartArray() {
    if (depth_ == 1 && top_key_ == "traceEvents") in_events_ = true;
    ++depth_;
    return true;
  }
  bool EndArray(rapidjson::SizeType) {
    --depth_;
    if (depth_ == 1) in_events_ = false;
    return true;
  }
  bool RawNumber(const char* str, rapidjson::SizeType n, bool) {
    const absl::string_view v(str, n);
    if (depth_ == 1 && key_ == "baseTimeNanoseconds") {
      if (!absl::SimpleAtoi(v, &s_.base_ns)) Die(s_.path + ": bad baseTimeNanoseconds");
    }
    if (!InEvents()) return true;
    if (depth_ == 3 && (key_ == "ts" || key_ == "dur")) {
      const std::optional<Micros> m = ParseMicros(v);
      if (!m) Die(absl::StrCat(s_.path, ": cannot shift \"", key_, "\": ", v));
      (key_ == "ts" ? ts_ : dur_) = m->ns;
      if (key_ == "ts") AddPatch(n, PatchKind::kTs);
    } else if ((depth_ == 3 && key_ == "id") ||
               (depth_ == 4 && in_args_ && (key_ == "External id" || key_ == "correlation"))) {
      int64_t id = 0;
      if (!absl::SimpleAtoi(v, &id) || id < 0) {
        Die(absl::StrCat(s_.path, ": cannot offset \"", key_, "\": ", v));
      }
      s_.max_id = std::max(s_.max_id, id);
      AddPatch(n, PatchKind::kId);
    }
    return true;
  }
  bool String(const char* str, rapidjson::SizeType n, bool) {
    if (!InEvents() || depth_ != 3) return true;
    const absl::string_view v(str, n);
    if (key_ == "ph") ph_.assign(str, n);
    if (key_ == "cat") cat_.assign(str, n);
    int64_t step = 0;
    if (key_ == "name" && absl::StartsWith(v, "ProfilerStep#") &&
        absl::SimpleAtoi(v.substr(13), &step) && step >= 0 &&
        v.substr(13).find_first_not_of("0123456789") == absl::string_view::npos) {
      // The raw text is the decoded text here (digits only, no escapes); patch the number.
      s_.max_step = std::max(s_.max_step, step);
      const uint32_t digits = static_cast<uint32_t>(v.size() - 13);
      s_.patches.push_back(Patch{Pos() - 1 - digits, digits, PatchKind::kStep});
    }
    return true;
  }
  bool Default() { return true; }

 private:
  bool InEvents() const { return in_events_; }
  uint32_t Pos() const { return static_cast<uint32_t>(stream_.Tell()); }
  void AddPatch(rapidjson::SizeType n, PatchKind kind) {
    s_.patches.push_back(Patch{Pos() - n, n, kind});
  }
  void FinishEvent() {
    event_.end = Pos();
    event_.patch_count = static_cast<uint32_t>(s_.patches.size()) - event_.first_patch;
    event_.tail = ph_ == "M" || ph_ == "i" || ph_ == "I" || cat_ == "Trace";
    if (!event_.tail && ts_) {
      s_.first_ns = std::min(s_.first_ns, *ts_);
      s_.last_ns = std::max(s_.last_ns, *ts_ + dur_.value_or(0));
    }
    s_.events.push_back(event_);
  }

  Source& s_;
  const TextStream& stream_;
  int depth_ = 0;
  bool in_events_ = false;
  bool in_args_ = false;
  std::string key_, top_key_, ph_, cat_;
  std::optional<int64_t> ts_, dur_;
  SourceEvent event_{};
};

Source LoadSource(const std::string& path) {
  Source s;
  s.path = path;
  s.text = ReadWholeFile(path);
  if (s.text.size() >= UINT32_MAX) Die(path + ": a source must be smaller than 4 GB");
  TextStream stream(s.text.c_str());
  IndexHandler handler(&s, &stream);
  rapidjson::Reader reader;
  const rapidjson::ParseResult ok =
      reader.Parse<rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseNanAndInfFlag>(stream,
                                                                                           handler);
  if (!ok) {
    Die(absl::StrCat(path, ": ", rapidjson::GetParseError_En(ok.Code()), " at byte ", ok.Offset()));
  }
  if (s.events.empty() || s.first_ns == INT64_MAX) Die(path + ": no traceEvents to repeat");
  return s;
}

// Where the output goes: a plain file and/or a gzip file, written through one buffer.
class Output {
 public:
  Output(const std::string& plain, const std::string& gz) {
    if (!plain.empty()) {
      plain_ = plain == "-" ? stdout : std::fopen(plain.c_str(), "wb");
      if (plain_ == nullptr) Die(absl::StrCat("cannot write ", plain, ": ", std::strerror(errno)));
    }
    if (!gz.empty()) {
      gz_ = gzopen(gz.c_str(), "wb6");
      if (gz_ == nullptr) Die(absl::StrCat("cannot write ", gz, ": ", std::strerror(errno)));
      gzbuffer(gz_, 1 << 20);
    }
    buffer_.reserve(kFlushBytes + (1 << 16));
  }
  std::string& buffer() { return buffer_; }
  void MaybeFlush() {
    if (buffer_.size() >= kFlushBytes) Flush();
  }
  void Flush() {
    bytes_ += buffer_.size();
    if (plain_ != nullptr &&
        std::fwrite(buffer_.data(), 1, buffer_.size(), plain_) != buffer_.size()) {
      Die(absl::StrCat("write failed: ", std::strerror(errno)));
    }
    if (gz_ != nullptr && !buffer_.empty() &&
        gzwrite(gz_, buffer_.data(), static_cast<unsigned>(buffer_.size())) <= 0) {
      Die("gzip write failed");
    }
    buffer_.clear();
  }
  void Close() {
    Flush();
    if (plain_ != nullptr && plain_ != stdout && std::fclose(plain_) != 0) Die("close failed");
    if (plain_ == stdout) std::fflush(stdout);
    if (gz_ != nullptr && gzclose(gz_) != Z_OK) Die("gzip close failed");
  }
  uint64_t bytes() const { return bytes_ + buffer_.size(); }

 private:
  static constexpr size_t kFlushBytes = 4 << 20;
  FILE* plain_ = nullptr;
  gzFile gz_ = nullptr;
  std::string buffer_;
  uint64_t bytes_ = 0;
};

// Appends one event of s, shifted by time_shift_ns, ids by id_offset, steps by step_offset.
void AppendEvent(const Source& s, const SourceEvent& e, int64_t time_shift_ns, int64_t id_offset,
                 int64_t step_offset, std::string* out) {
  uint32_t at = e.begin;
  for (uint32_t i = 0; i < e.patch_count; ++i) {
    const Patch& p = s.patches[e.first_patch + i];
    out->append(s.text, at, p.offset - at);
    const absl::string_view value(s.text.data() + p.offset, p.length);
    int64_t v = 0;
    switch (p.kind) {
      case PatchKind::kTs: {
        const Micros m = *ParseMicros(value);
        AppendMicros(m.ns + time_shift_ns, m.extra, out);
        break;
      }
      case PatchKind::kId:
      case PatchKind::kStep:
        (void)absl::SimpleAtoi(value, &v);
        absl::StrAppend(out, v + (p.kind == PatchKind::kId ? id_offset : step_offset));
        break;
    }
    at = p.offset + p.length;
  }
  out->append(s.text, at, e.end - at);
}

std::string DefaultSource(const char* name) {
  return absl::StrCat(GPUIDLE_TEST_DATA_DIR, "/traces/torch/", name);
}

int Usage() {
  std::fprintf(stderr,
               "usage: make_big_trace [--size-mb N] [--out PATH.json] [--gzip-out PATH.json.gz] "
               "[SOURCE.json[.gz]...]\n"
               "  --size-mb N   output size in MB of 10^6 bytes (default 300)\n"
               "  --out PATH    plain JSON output (\"-\": stdout)\n"
               "  --gzip-out P  gzip output of the same JSON\n"
               "  default sources: tiny_mlp_launch_bound and mixed_resnet of tests/data\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  double size_mb = 300;
  std::string out_path, gz_path;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--size-mb" || a == "--out" || a == "--gzip-out") && i + 1 < argc) {
      const std::string v = argv[++i];
      if (a == "--out") out_path = v;
      if (a == "--gzip-out") gz_path = v;
      if (a == "--size-mb" && (!absl::SimpleAtod(v, &size_mb) || size_mb <= 0)) return Usage();
    } else if (absl::StartsWith(a, "-") && a != "-") {
      return Usage();
    } else {
      paths.push_back(a);
    }
  }
  if (out_path.empty() && gz_path.empty()) return Usage();
  if (paths.empty()) {
    paths = {DefaultSource("tiny_mlp_launch_bound.json.gz"), DefaultSource("mixed_resnet.json.gz")};
  }
  std::vector<Source> sources;
  for (const std::string& p : paths) sources.push_back(LoadSource(p));

  const Source& first = sources.front();
  int64_t stride = 1;  // the id offset of one block: above every id of every source
  for (const Source& s : sources) stride = std::max(stride, s.max_id + 1);
  const uint64_t target = static_cast<uint64_t>(size_mb * 1e6);

  Output out(out_path, gz_path);
  std::string& buf = out.buffer();
  // The first source's header: everything before its first event.
  buf.append(first.text, 0, first.events.front().begin);
  size_t tail_bytes = 0;  // the metadata and trailer written at the end, roughly
  for (const Source& s : sources) {
    for (const SourceEvent& e : s.events) tail_bytes += e.tail ? e.end - e.begin + 4 : 0;
  }
  tail_bytes += first.text.size() - first.events.back().end;

  // Time stamps are relative to baseTimeNanoseconds; the output uses the first source's base.
  int64_t cursor_ns = first.first_ns;  // where the next block starts, on the output's clock
  std::vector<int64_t> first_shift(sources.size(), 0);
  int64_t block = 0, step_offset = 0;
  uint64_t events = 0;
  bool need_comma = false;
  auto separator = [&] {
    if (need_comma) buf.append(",\n  ");
    need_comma = true;
  };
  while (block == 0 || out.bytes() + tail_bytes < target) {
    const size_t index = static_cast<size_t>(block) % sources.size();
    const Source& s = sources[index];
    // A source time stamp ts is base + ts in absolute time, ts + base - first.base on the
    // output's clock; the block's first event goes to cursor_ns.
    const int64_t shift_out = cursor_ns - s.first_ns - (s.base_ns - first.base_ns);
    if (block < static_cast<int64_t>(sources.size())) first_shift[index] = shift_out;
    for (const SourceEvent& e : s.events) {
      if (e.tail) continue;
      separator();
      AppendEvent(s, e, shift_out, block * stride, step_offset, &buf);
      ++events;
      out.MaybeFlush();
    }
    cursor_ns += s.last_ns - s.first_ns;
    step_offset += s.max_step;
    ++block;
  }
  // Metadata once per source, on the clock of its first block, as Kineto writes it: last.
  for (size_t i = 0; i < sources.size(); ++i) {
    if (static_cast<int64_t>(i) >= block) break;
    for (const SourceEvent& e : sources[i].events) {
      if (!e.tail) continue;
      separator();
      AppendEvent(sources[i], e, first_shift[i], 0, 0, &buf);
      ++events;
    }
  }
  buf.append(first.text, first.events.back().end, std::string::npos);  // "\n  ],\n  ...}"
  out.Close();
  std::fprintf(stderr,
               "make_big_trace: %" PRIu64 " bytes, %" PRIu64 " events, %" PRId64
               " blocks from %zu sources, %.3f s of trace\n",
               out.bytes(), events, block, sources.size(),
               static_cast<double>(cursor_ns - first.first_ns) / 1e9);
  return 0;
}
