// The Kineto reader's driver: RapidJSON's SAX parser over a ChunkedJsonStream, sped up by the
// scanners of json_scanners.h, feeding the KinetoHandler; then the post-processing. The stages
// live in their own files:
//   trace_keys.h          which keys, args and categories are kept (model/trace_names.h)
//   trace_numbers.h       exact integers and time stamps from the text of numbers
//   json_scanners.h       strings, numbers and white space found inside the current chunk
//   kineto_handler.h      the SAX state machine: where in the trace, one Event at a time
//   event_mapper.h        an Event into the model
//   reader_warnings.h     what was skipped, as warning lines
//   trace_post_process.h  after the parse: placement, joins, the base time, sorting
//   text_start.h          text that is not UTF-8 JSON, named before parsing
#include "ingest/kineto_reader.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/out_of_memory.h"
#include "core/status_macros.h"
#include "ingest/json_scanners.h"
#include "ingest/json_stream.h"
#include "ingest/kineto_handler.h"
#include "ingest/text_start.h"
#include "ingest/trace_post_process.h"
#include "rapidjson/error/en.h"
#include "rapidjson/reader.h"

// The fast scanners below specialise RapidJSON 1.1's internal ParseString, ParseNumber and
// SkipWhitespace (Debian 12's rapidjson-dev); check them again before moving to another release.
#if RAPIDJSON_MAJOR_VERSION != 1 || RAPIDJSON_MINOR_VERSION != 1
#error "kineto_reader.cc's scanners are written against RapidJSON 1.1"
#endif

namespace gpuidle::internal::kineto {
namespace {

// --- Fast scanning ---
// RapidJSON reads a generic stream one character at a time, with a bounds check, a copy of
// every character of every string and number onto its stack, and a loop per character of
// white space: most of the time of a large trace. The specialisations below, after this
// namespace, let it scan white space, strings and numbers inside the current chunk of the
// ChunkedJsonStream instead, and hand strings and numbers to the handler where they lie.
// Anything unusual (an escape, a control character, an exponent, NaN, a token that runs to the
// end of the chunk, malformed input) goes to RapidJSON's own code, so results and errors (codes
// and offsets) are the same as before, with bounds on what it copies: strings into a buffer of
// kMaxKeptStringBytes + 1 bytes (the rest is checked, not stored), numbers up to
// kMaxNumberBytes (a longer one is an error).

// Iterative: RapidJSON's recursive parser runs out of stack on deeply nested input (40,000
// '[' crashed it); the iterative one keeps its state on the heap, and the handler refuses
// input nested deeper than kMaxJsonDepth.
constexpr unsigned kParseFlags = rapidjson::kParseNumbersAsStringsFlag |
                                 rapidjson::kParseStopWhenDoneFlag |
                                 rapidjson::kParseNanAndInfFlag | rapidjson::kParseIterativeFlag;

// The handler as a type of this file only: RapidJSON's parser, instantiated for it, has
// internal linkage, so the compiler inlines the parser's stages into one another (without,
// the reader is about a tenth slower).
class LocalHandler final : public KinetoHandler {
 public:
  using KinetoHandler::KinetoHandler;
};

// The same handler as another type: RapidJSON's generic string and number parsers, which the
// specialisations for LocalHandler fall back on, are instantiated for this one.
class KinetoHandlerRef {
 public:
  explicit KinetoHandlerRef(KinetoHandler& h) : h_(h) {}
  bool Null() { return h_.Null(); }
  bool Bool(bool b) { return h_.Bool(b); }
  bool Int(int i) { return h_.Int(i); }
  bool Uint(unsigned u) { return h_.Uint(u); }
  bool Int64(int64_t i) { return h_.Int64(i); }
  bool Uint64(uint64_t u) { return h_.Uint64(u); }
  bool Double(double d) { return h_.Double(d); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool c) { return h_.RawNumber(s, n, c); }
  bool String(const char* s, rapidjson::SizeType n, bool c) { return h_.String(s, n, c); }
  bool Key(const char* s, rapidjson::SizeType n, bool c) { return h_.Key(s, n, c); }
  bool StartObject() { return h_.StartObject(); }
  bool EndObject(rapidjson::SizeType n) { return h_.EndObject(n); }
  bool StartArray() { return h_.StartArray(); }
  bool EndArray(rapidjson::SizeType n) { return h_.EndArray(n); }

 private:
  KinetoHandler& h_;
};

}  // namespace
}  // namespace gpuidle::internal::kineto

namespace rapidjson {

template <>
inline void SkipWhitespace(gpuidle::internal::ChunkedJsonStream& is) {
  // Most calls find no white space or one space (after ':' and ','): those inline, longer
  // runs (line breaks and indentation) out of line.
  const char* p = is.cursor();
  if (!gpuidle::internal::kineto::IsJsonSpace(*p)) return;
  if (p + 1 < is.chunk_end() && !gpuidle::internal::kineto::IsJsonSpace(p[1])) {
    is.SkipTo(p + 1);
    return;
  }
  gpuidle::internal::kineto::SkipWhitespaceRun(is);
}

template <>
template <>
void GenericReader<UTF8<>, UTF8<>, CrtAllocator>::ParseString<
    gpuidle::internal::kineto::kParseFlags, gpuidle::internal::ChunkedJsonStream,
    gpuidle::internal::kineto::LocalHandler>(gpuidle::internal::ChunkedJsonStream& is,
                                             gpuidle::internal::kineto::LocalHandler& handler,
                                             bool isKey) {
  // is.cursor() is the opening quote. A string without escapes that ends in this chunk goes to
  // the handler where it lies (before SkipTo, which may overwrite the chunk).
  const char* begin = is.cursor() + 1;
  const char* end = is.chunk_end();
  const char* p = gpuidle::internal::kineto::FindStringSpecial(begin, end);
  if (p != end && *p == '"') {
    const SizeType length = static_cast<SizeType>(p - begin);
    const bool ok = isKey ? handler.Key(begin, length, true) : handler.String(begin, length, true);
    is.SkipTo(p + 1);
    if (RAPIDJSON_UNLIKELY(!ok)) RAPIDJSON_PARSE_ERROR(kParseErrorTermination, is.Tell());
    return;
  }
  // Everything else: RapidJSON's own string parser (escapes, errors and their offsets as
  // ever), into a buffer that keeps what the handler may keep, however long the string.
  gpuidle::internal::kineto::BoundedStringBuffer& out = handler.string_buffer();
  out.Clear();
  is.Take();  // the opening quote
  ParseStringToStream<gpuidle::internal::kineto::kParseFlags, UTF8<>, UTF8<>>(is, out);
  RAPIDJSON_PARSE_ERROR_EARLY_RETURN_VOID;
  const absl::string_view text = out.text();
  const SizeType length = static_cast<SizeType>(text.size());
  const bool ok =
      isKey ? handler.Key(text.data(), length, true) : handler.String(text.data(), length, true);
  if (RAPIDJSON_UNLIKELY(!ok)) RAPIDJSON_PARSE_ERROR(kParseErrorTermination, is.Tell());
}

template <>
template <>
void GenericReader<UTF8<>, UTF8<>, CrtAllocator>::ParseNumber<
    gpuidle::internal::kineto::kParseFlags, gpuidle::internal::ChunkedJsonStream,
    gpuidle::internal::kineto::LocalHandler>(gpuidle::internal::ChunkedJsonStream& is,
                                             gpuidle::internal::kineto::LocalHandler& handler) {
  const char* begin = is.cursor();
  const char* p = gpuidle::internal::kineto::ScanPlainNumber(begin, is.chunk_end());
  const size_t offset = is.Tell();
  if (p != nullptr) {
    if (RAPIDJSON_UNLIKELY(static_cast<size_t>(p - begin) > gpuidle::internal::kMaxNumberBytes)) {
      handler.NumberTooLong(offset);
      RAPIDJSON_PARSE_ERROR(kParseErrorTermination, offset);
    }
    const bool ok = handler.RawNumber(begin, static_cast<SizeType>(p - begin), true);
    is.SkipTo(p);  // p is inside the chunk: no read
    if (RAPIDJSON_UNLIKELY(!ok)) RAPIDJSON_PARSE_ERROR(kParseErrorTermination, offset);
    return;
  }
  // RapidJSON's own number parser copies the number whole: the stream ends the input soon
  // after kMaxNumberBytes, which bounds the copy, and a longer number is an error.
  gpuidle::internal::kineto::KinetoHandlerRef generic(handler);
  is.BeginToken(gpuidle::internal::kMaxNumberBytes);
  ParseNumber<gpuidle::internal::kineto::kParseFlags>(is, generic);
  is.EndToken();
  if (RAPIDJSON_UNLIKELY(is.token_too_long() ||
                         is.Tell() - offset > gpuidle::internal::kMaxNumberBytes)) {
    handler.NumberTooLong(offset);
    if (!HasParseError()) RAPIDJSON_PARSE_ERROR(kParseErrorTermination, is.Tell());
  }
}

}  // namespace rapidjson

namespace gpuidle::internal {
namespace {

using kineto::DrainCompressed;
using kineto::FinishTimeline;
using kineto::kParseFlags;
using kineto::NotUtf8Json;
using kineto::PrefixedSource;
using kineto::ReadTextStart;
using kineto::TextStart;

absl::StatusOr<Timeline> ReadKinetoTraceOrThrow(ByteSource& raw_source, size_t chunk_bytes) {
  GPUIDLE_ASSIGN_OR_RETURN(const TextStart start, ReadTextStart(raw_source));
  if (const std::string problem = NotUtf8Json(start); !problem.empty()) {
    return absl::InvalidArgumentError(problem);
  }
  std::string prefix = start.str();
  // A UTF-8 byte order mark (Windows tools write one) is no part of the JSON.
  if (absl::StartsWith(prefix, "\xef\xbb\xbf")) prefix.erase(0, 3);
  PrefixedSource source(raw_source, std::move(prefix));

  Timeline timeline;
  timeline.info.source = "pytorch-profiler";
  kineto::LocalHandler handler(&timeline);
  ChunkedJsonStream stream(source, chunk_bytes);
  rapidjson::Reader reader;
  const rapidjson::ParseResult ok = reader.Parse<kParseFlags>(stream, handler);
  if (!stream.source_status().ok()) return stream.source_status();
  if (handler.number_too_long_at()) {
    return absl::InvalidArgumentError(
        absl::StrCat("a number longer than ", kMaxNumberBytes, " bytes (at byte ",
                     *handler.number_too_long_at(), "): not a trace"));
  }
  if (!ok) {
    if (ok.Code() == rapidjson::kParseErrorDocumentEmpty && !stream.at_end()) {
      return absl::InvalidArgumentError(absl::StrCat("a NUL byte where JSON should begin (at byte ",
                                                     ok.Offset(), "): it is not JSON"));
    }
    if (stream.at_end() && !handler.root_seen() && handler.error().empty()) {
      return absl::InvalidArgumentError("holds no JSON document (only white space)");
    }
    if (!stream.at_end()) GPUIDLE_RETURN_IF_ERROR(DrainCompressed(source));
    if (!handler.error().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(handler.error(), " (at byte ", ok.Offset(), ")"));
    }
    if (stream.at_end()) {
      return absl::DataLossError(
          absl::StrCat("the JSON ends early at byte ", ok.Offset(), ": the trace is truncated"));
    }
    if (!handler.root_seen()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "not JSON: ", rapidjson::GetParseError_En(ok.Code()), " (at byte ", ok.Offset(), ")"));
    }
    return absl::InvalidArgumentError(absl::StrCat("malformed JSON at byte ", ok.Offset(), ": ",
                                                   rapidjson::GetParseError_En(ok.Code())));
  }
  // kParseStopWhenDoneFlag stops after the root; anything but whitespace after it is an error.
  while (stream.Peek() == ' ' || stream.Peek() == '\n' || stream.Peek() == '\r' ||
         stream.Peek() == '\t') {
    stream.Take();
  }
  if (!stream.source_status().ok()) return stream.source_status();
  if (!stream.at_end()) {  // at_end(), not Peek() == '\0': a NUL byte is data too
    GPUIDLE_RETURN_IF_ERROR(DrainCompressed(source));
    return absl::InvalidArgumentError(absl::StrCat(
        "unexpected data after the end of the JSON document (at byte ", stream.Tell(), ")"));
  }
  if (!handler.saw_trace_events()) {
    return absl::InvalidArgumentError(
        "no \"traceEvents\" array: this JSON is not a Chrome trace from the PyTorch profiler");
  }
  GPUIDLE_RETURN_IF_ERROR(
      FinishTimeline(handler.mapper(), handler.warnings(), handler.base_time_ns(), &timeline));
  return timeline;
}

}  // namespace

absl::StatusOr<Timeline> ReadKinetoTrace(ByteSource& source) {
  return ReadKinetoTrace(source, size_t{1} << 20);
}

absl::StatusOr<Timeline> ReadKinetoTrace(ByteSource& source, size_t chunk_bytes) {
  // Memory grows with what the trace holds: a trace too large for this machine is an error,
  // never an abort (or a dead Python interpreter).
  return OutOfMemoryIsAnErrorWith([&] { return ReadKinetoTraceOrThrow(source, chunk_bytes); },
                                  [&] {
                                    return absl::StrCat(
                                        "out of memory while reading the trace (after ",
                                        source.file_bytes_read(), " bytes of the file)");
                                  });
}

}  // namespace gpuidle::internal
