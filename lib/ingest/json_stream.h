// A RapidJSON input stream over a ByteSource: the parser sees one character at a time while
// the file is read (and inflated) in fixed chunks, so memory does not grow with the file.
#ifndef GPUIDLE_LIB_INGEST_JSON_STREAM_H_
#define GPUIDLE_LIB_INGEST_JSON_STREAM_H_

#include <cstddef>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "ingest/byte_source.h"

namespace gpuidle::internal {

class ChunkedJsonStream {
 public:
  using Ch = char;  // RapidJSON's stream concept

  explicit ChunkedJsonStream(ByteSource& source, size_t chunk_bytes = 1 << 20)
      : source_(source), buffer_(chunk_bytes + 1) {
    Refill();
  }

  Ch Peek() const { return *current_; }
  Ch Take() {
    const Ch c = *current_;
    Advance();
    return c;
  }
  size_t Tell() const { return consumed_ + static_cast<size_t>(current_ - buffer_.data()); }

  // For the reader's scanners (kineto_reader.cc), which look at many characters at once: the
  // unread characters of the current chunk are [cursor(), chunk_end()); at the end of the input
  // that is the terminating '\0'. SkipTo(p), cursor() < p <= chunk_end(), consumes up to p;
  // at chunk_end() it reads the next chunk, which overwrites the current one.
  const Ch* cursor() const { return current_; }
  const Ch* chunk_end() const { return last_ + 1; }
  void SkipTo(const Ch* p) {
    current_ += (p - current_) - 1;
    Advance();
  }

  // Not used by a reader; RapidJSON's concept requires them.
  Ch* PutBegin() { return nullptr; }
  void Put(Ch) {}
  void Flush() {}
  size_t PutEnd(Ch*) { return 0; }

  // The error of the underlying source, if reading stopped on one.
  const absl::Status& source_status() const { return status_; }
  bool at_end() const { return eof_ && current_ == last_ && *current_ == '\0'; }

  // A bound on one token that the parser copies whole (RapidJSON's generic number parser
  // keeps every character): once more than max_bytes of input have passed since
  // BeginToken(max_bytes), the stream ends as if the input did, and token_too_long() says so.
  // The check runs only when a chunk is read, so a token may run up to one chunk past the
  // bound; the hot path pays nothing.
  void BeginToken(size_t max_bytes) {
    token_start_ = Tell();
    token_max_bytes_ = max_bytes;
    token_open_ = true;
  }
  void EndToken() { token_open_ = false; }
  bool token_too_long() const { return token_too_long_; }

 private:
  // Always inline, the next chunk out of line: RapidJSON takes every character it reads itself
  // through here, and GCC does not inline it into all of those places on its own.
  ABSL_ATTRIBUTE_ALWAYS_INLINE void Advance() {
    if (ABSL_PREDICT_TRUE(current_ < last_)) {
      ++current_;
    } else if (!eof_) {
      NextChunk();
    }
  }

  ABSL_ATTRIBUTE_NOINLINE void NextChunk() {
    consumed_ += static_cast<size_t>(last_ - buffer_.data()) + 1;
    if (token_open_ && consumed_ - token_start_ > token_max_bytes_) {
      token_too_long_ = true;
      EndInput();
      return;
    }
    Refill();
  }

  void EndInput() {
    eof_ = true;
    buffer_[0] = '\0';  // RapidJSON reads '\0' as the end of input
    current_ = last_ = buffer_.data();
  }

  void Refill() {
    absl::StatusOr<size_t> got = source_.Read(buffer_.data(), buffer_.size() - 1);
    size_t n = 0;
    if (!got.ok()) {
      status_ = got.status();
    } else {
      n = *got;
    }
    current_ = buffer_.data();
    if (n == 0) {
      EndInput();
    } else {
      last_ = buffer_.data() + n - 1;
    }
  }

  ByteSource& source_;
  std::vector<Ch> buffer_;
  Ch* current_ = nullptr;
  Ch* last_ = nullptr;
  size_t consumed_ = 0;
  bool eof_ = false;
  absl::Status status_;
  size_t token_start_ = 0;
  size_t token_max_bytes_ = 0;
  bool token_open_ = false;
  bool token_too_long_ = false;
};

}  // namespace gpuidle::internal

#endif  // GPUIDLE_LIB_INGEST_JSON_STREAM_H_
