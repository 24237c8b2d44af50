#include "ingest/byte_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <limits>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "core/text_safety.h"

namespace gpuidle::internal {
namespace {

absl::Status ErrnoError(int err, const std::string& what) {
  const std::string msg = absl::StrCat(what, ": ", std::strerror(err));
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return absl::NotFoundError(msg);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(msg);
    default:
      return absl::UnavailableError(msg);
  }
}

// The bytes as stored, before any inflating: a file (or pipe), or memory.
class RawInput {
 public:
  virtual ~RawInput() = default;
  virtual absl::StatusOr<size_t> Read(char* buffer, size_t n) = 0;
};

class FileDescriptor : public RawInput {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() override {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

  absl::StatusOr<size_t> Read(char* buffer, size_t n) override {
    for (;;) {
      const ssize_t got = ::read(fd_, buffer, n);
      if (got >= 0) return static_cast<size_t>(got);
      if (errno != EINTR) return ErrnoError(errno, "read failed");
    }
  }

 private:
  int fd_;
};

class MemoryInput : public RawInput {
 public:
  explicit MemoryInput(absl::string_view bytes) : bytes_(bytes) {}
  absl::StatusOr<size_t> Read(char* buffer, size_t n) override {
    const size_t k = std::min(n, bytes_.size());
    std::memcpy(buffer, bytes_.data(), k);
    bytes_.remove_prefix(k);
    return k;
  }

 private:
  absl::string_view bytes_;
};

class PlainSource : public ByteSource {
 public:
  PlainSource(std::unique_ptr<RawInput> fd, std::string prefix)
      : fd_(std::move(fd)), prefix_(std::move(prefix)) {}

  absl::StatusOr<size_t> Read(char* buffer, size_t n) override {
    if (prefix_pos_ < prefix_.size()) {  // the bytes read to sniff the format
      const size_t k = std::min(n, prefix_.size() - prefix_pos_);
      std::memcpy(buffer, prefix_.data() + prefix_pos_, k);
      prefix_pos_ += k;
      bytes_ += k;
      return k;
    }
    absl::StatusOr<size_t> got = fd_->Read(buffer, n);
    if (got.ok()) bytes_ += *got;
    return got;
  }
  uint64_t file_bytes_read() const override { return bytes_; }

 private:
  std::unique_ptr<RawInput> fd_;
  std::string prefix_;
  size_t prefix_pos_ = 0;
  uint64_t bytes_ = 0;
};

class GzipSource : public ByteSource {
 public:
  GzipSource(std::unique_ptr<RawInput> fd, std::string prefix)
      : fd_(std::move(fd)), in_(kInputChunk) {
    std::memcpy(in_.data(), prefix.data(), prefix.size());
    stream_.next_in = reinterpret_cast<Bytef*>(in_.data());
    stream_.avail_in = static_cast<uInt>(prefix.size());
    bytes_ = prefix.size();
    ok_ = inflateInit2(&stream_, 16 + MAX_WBITS) == Z_OK;  // 16: gzip wrapper
  }
  ~GzipSource() override { inflateEnd(&stream_); }

  absl::StatusOr<size_t> Read(char* buffer, size_t n) override {
    if (!ok_) return absl::InternalError("zlib could not be initialised");
    // inflate() makes no progress without room for output; zlib counts in 32 bits.
    if (n == 0) return 0;
    n = std::min<size_t>(n, std::numeric_limits<uInt>::max());
    stream_.next_out = reinterpret_cast<Bytef*>(buffer);
    stream_.avail_out = static_cast<uInt>(n);
    while (stream_.avail_out == n) {  // until some output, or the end
      if (stream_.avail_in == 0 && !input_done_) {
        absl::StatusOr<size_t> got = fd_->Read(in_.data(), in_.size());
        if (!got.ok()) return got.status();
        input_done_ = *got == 0;
        bytes_ += *got;
        stream_.next_in = reinterpret_cast<Bytef*>(in_.data());
        stream_.avail_in = static_cast<uInt>(*got);
      }
      if (member_done_) {
        if (stream_.avail_in == 0 && input_done_) return 0;
        if (stream_.avail_in == 0) continue;
        // Another gzip member follows (concatenated gzip files are one stream).
        if (inflateReset(&stream_) != Z_OK) return absl::DataLossError("corrupt gzip data");
        member_done_ = false;
      }
      const int rc = inflate(&stream_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        member_done_ = true;
      } else if (rc == Z_BUF_ERROR && stream_.avail_in == 0 && input_done_) {
        return absl::DataLossError(
            absl::StrCat("truncated gzip data: the file ends inside the compressed stream (after ",
                         bytes_, " bytes)"));
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        return absl::DataLossError(
            absl::StrCat("corrupt gzip data near byte ", bytes_ - stream_.avail_in, ": ",
                         stream_.msg != nullptr ? stream_.msg : "inflate failed"));
      }
    }
    return n - stream_.avail_out;
  }
  uint64_t file_bytes_read() const override { return bytes_ - stream_.avail_in; }
  bool compressed() const override { return true; }

 private:
  static constexpr size_t kInputChunk = 1 << 20;
  std::unique_ptr<RawInput> fd_;
  std::vector<char> in_;
  z_stream stream_{};
  bool ok_ = false;
  bool input_done_ = false;
  bool member_done_ = false;
  uint64_t bytes_ = 0;
};

// A ring of chunks: the worker fills them in order, the consumer drains them in the same
// order. A chunk belongs to the worker while !filled and to the consumer while filled; the
// flag changes under the mutex, which orders the chunk's contents between the threads.
class ReadAheadSource : public ByteSource {
 public:
  ReadAheadSource(std::unique_ptr<ByteSource> inner, size_t chunk_bytes)
      : inner_(std::move(inner)), compressed_(inner_->compressed()) {
    for (Chunk& c : chunks_) c.data.resize(chunk_bytes);
  }

  ~ReadAheadSource() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    changed_.notify_all();
    if (worker_.joinable()) worker_.join();
  }

  absl::StatusOr<size_t> Read(char* buffer, size_t n) override {
    if (n == 0) return 0;
    if (!started_) Start();
    if (!threaded_) return inner_->Read(buffer, n);
    for (;;) {
      Chunk& c = chunks_[read_index_];
      {
        std::unique_lock<std::mutex> lock(mu_);
        changed_.wait(lock, [&] { return c.filled; });
      }
      if (c.pos < c.size) {
        const size_t k = std::min(n, c.size - c.pos);
        std::memcpy(buffer, c.data.data() + c.pos, k);
        c.pos += k;
        file_bytes_ = c.file_bytes;
        return k;
      }
      if (c.last) {  // stays filled: every later Read gives the same end or error
        if (!c.status.ok()) return c.status;
        return 0;
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        c.filled = false;
      }
      changed_.notify_all();
      read_index_ = (read_index_ + 1) % chunks_.size();
    }
  }

  uint64_t file_bytes_read() const override {
    return threaded_ ? file_bytes_ : inner_->file_bytes_read();
  }
  bool compressed() const override { return compressed_; }

 private:
  struct Chunk {
    std::vector<char> data;
    size_t size = 0;
    size_t pos = 0;
    bool filled = false;
    bool last = false;  // the end of the input, or an error, follows this chunk's data
    absl::Status status;
    uint64_t file_bytes = 0;
  };

  void Start() {
    started_ = true;
    // A thread that cannot be started is no reason to fail: read in this thread instead.
    try {
      worker_ = std::thread([this] { Fill(); });
      threaded_ = true;
    } catch (const std::system_error&) {
      threaded_ = false;
    } catch (const std::bad_alloc&) {
      threaded_ = false;
    }
  }

  // An exception cannot leave the worker (it would end the process): out of memory, the one
  // the inner source may throw, becomes the error the consumer reads.
  void Fill() {
    try {
      FillChunks();
    } catch (const std::bad_alloc&) {
      Chunk& c = chunks_[fill_index_];
      std::unique_lock<std::mutex> lock(mu_);
      changed_.wait(lock, [&] { return stop_ || !c.filled; });
      if (stop_) return;
      c.size = 0;
      c.pos = 0;
      c.last = true;
      c.status = absl::ResourceExhaustedError("out of memory while reading the file");
      c.filled = true;
      lock.unlock();
      changed_.notify_all();
    }
  }

  void FillChunks() {
    size_t& index = fill_index_;
    for (;;) {
      Chunk& c = chunks_[index];
      {
        std::unique_lock<std::mutex> lock(mu_);
        changed_.wait(lock, [&] { return stop_ || !c.filled; });
        if (stop_) return;
      }
      size_t size = 0;
      absl::Status status;
      bool last = false;
      while (size < c.data.size()) {
        absl::StatusOr<size_t> got = inner_->Read(c.data.data() + size, c.data.size() - size);
        if (!got.ok() || *got == 0) {
          if (!got.ok()) status = got.status();
          last = true;
          break;
        }
        size += *got;
      }
      const uint64_t file_bytes = inner_->file_bytes_read();
      {
        std::lock_guard<std::mutex> lock(mu_);
        c.size = size;
        c.pos = 0;
        c.last = last;
        c.status = std::move(status);
        c.file_bytes = file_bytes;
        c.filled = true;
      }
      changed_.notify_all();
      if (last) return;
      index = (index + 1) % chunks_.size();
    }
  }

  std::unique_ptr<ByteSource> inner_;
  const bool compressed_;
  std::array<Chunk, 3> chunks_;
  std::mutex mu_;
  std::condition_variable changed_;
  bool stop_ = false;  // guarded by mu_
  std::thread worker_;
  size_t fill_index_ = 0;  // worker thread only
  bool started_ = false;   // consumer thread only, from here on
  bool threaded_ = false;
  size_t read_index_ = 0;
  uint64_t file_bytes_ = 0;
};

class ProgressSource : public ByteSource {
 public:
  ProgressSource(std::unique_ptr<ByteSource> inner, ReadProgress progress)
      : inner_(std::move(inner)), progress_(std::move(progress)) {}

  absl::StatusOr<size_t> Read(char* buffer, size_t n) override {
    absl::StatusOr<size_t> got = inner_->Read(buffer, n);
    const uint64_t at = inner_->file_bytes_read();
    const bool end = got.ok() && *got == 0 && n > 0;
    if (at >= told_ + kProgressStep || (end && at != told_)) {
      told_ = at;
      if (!progress_(at)) return absl::CancelledError("the read was cancelled");
    }
    return got;
  }
  uint64_t file_bytes_read() const override { return inner_->file_bytes_read(); }
  bool compressed() const override { return inner_->compressed(); }

 private:
  std::unique_ptr<ByteSource> inner_;
  ReadProgress progress_;
  uint64_t told_ = 0;
};

}  // namespace

std::unique_ptr<ByteSource> ReadAhead(std::unique_ptr<ByteSource> inner, size_t chunk_bytes) {
  return std::make_unique<ReadAheadSource>(std::move(inner), std::max<size_t>(chunk_bytes, 1));
}

std::unique_ptr<ByteSource> WithProgress(std::unique_ptr<ByteSource> inner, ReadProgress progress) {
  if (!progress) return inner;
  return std::make_unique<ProgressSource>(std::move(inner), std::move(progress));
}

namespace {

// Formats gpuidle does not read, by their magic bytes: the message asks to decompress first.
struct OtherCompression {
  absl::string_view magic;
  absl::string_view name;
  absl::string_view command;
};
constexpr OtherCompression kOtherCompressions[] = {
    {"BZh", "bzip2", "bzip2 -d"},
    {absl::string_view("\xfd"
                       "7zXZ\x00",
                       6),
     "xz", "xz -d"},
    {"\x28\xb5\x2f\xfd", "zstd", "zstd -d"},
    {"PK\x03\x04", "zip", "unzip"},
    {"\x04\x22\x4d\x18", "lz4", "lz4 -d"},
    {"7z\xbc\xaf\x27\x1c", "7-Zip", "7z x"},
};
constexpr size_t kMagicBytes = 6;  // the longest magic above

// Reads the first bytes of `input` and opens the source their format needs. `name` starts the
// messages ("t.json", "the input").
absl::StatusOr<std::unique_ptr<ByteSource>> OpenSniffed(std::unique_ptr<RawInput> input,
                                                        absl::string_view name) {
  char magic[kMagicBytes];
  size_t have = 0;
  while (have < sizeof(magic)) {
    absl::StatusOr<size_t> got = input->Read(magic + have, sizeof(magic) - have);
    if (!got.ok()) {
      return absl::Status(got.status().code(), absl::StrCat(name, ": ", got.status().message()));
    }
    if (*got == 0) break;
    have += *got;
  }
  if (have == 0) return absl::InvalidArgumentError(absl::StrCat(name, " is empty"));
  std::string prefix(magic, have);
  if (prefix.size() >= 2 && static_cast<unsigned char>(prefix[0]) == 0x1f &&
      static_cast<unsigned char>(prefix[1]) == 0x8b) {
    return std::make_unique<GzipSource>(std::move(input), std::move(prefix));
  }
  for (const OtherCompression& c : kOtherCompressions) {
    if (absl::StartsWith(prefix, c.magic)) {
      return absl::InvalidArgumentError(absl::StrCat(
          name, " is compressed with ", c.name,
          "; gpuidle reads plain or gzip JSON: decompress it first (", c.command, ")"));
    }
  }
  return std::make_unique<PlainSource>(std::move(input), std::move(prefix));
}

absl::string_view FileKind(mode_t mode) {
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

absl::StatusOr<std::unique_ptr<ByteSource>> OpenByteSource(const std::string& path) {
  const int raw = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (raw < 0) return ErrnoError(errno, absl::StrCat(path, ": cannot open"));
  auto fd = std::make_unique<FileDescriptor>(raw);
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return ErrnoError(errno, absl::StrCat(path, ": cannot stat"));
  if (S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(path, " is a directory, not a trace file"));
  }
  // Devices (/dev/zero, /dev/urandom, a terminal) may never end: only files and pipes are read
  // (a pipe, as from `<(zcat trace.json.gz)`, ends when its writer does).
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is ", FileKind(st.st_mode),
                     ", not a trace file (gpuidle reads regular files and pipes)"));
  }
  return OpenSniffed(std::move(fd), path);
}

std::string NotGzipNote(const std::string& path) {
  constexpr absl::string_view kGz = ".gz";
  if (path.size() <= kGz.size() || !absl::EndsWithIgnoreCase(path, kGz) ||
      path.find('\0') != std::string::npos) {
    return "";
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return "";
  const int raw = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (raw < 0) return "";
  FileDescriptor fd(raw);
  char head[64];
  size_t have = 0;
  while (have < sizeof(head)) {
    absl::StatusOr<size_t> got = fd.Read(head + have, sizeof(head) - have);
    if (!got.ok() || *got == 0) break;
    have += *got;
  }
  const absl::string_view bytes(head, have);
  if (bytes.empty() || absl::StartsWith(bytes, "\x1f\x8b")) return "";
  for (const OtherCompression& c : kOtherCompressions) {
    if (absl::StartsWith(bytes, c.magic)) return "";
  }
  // JSON's own white space, after a UTF-8 byte order mark.
  absl::string_view text = bytes;
  absl::ConsumePrefix(&text, "\xef\xbb\xbf");
  while (!text.empty() &&
         (text[0] == ' ' || text[0] == '\n' || text[0] == '\r' || text[0] == '\t')) {
    text.remove_prefix(1);
  }
  if (!text.empty() && (text[0] == '{' || text[0] == '[')) {
    const size_t slash = path.rfind('/');
    const std::string base = path.substr(slash == std::string::npos ? 0 : slash + 1);
    return absl::StrCat(path, " is not gzip data (it starts like JSON; rename it to ",
                        base.substr(0, base.size() - kGz.size()), ")");
  }
  return absl::StrCat(path, " is not gzip data (it starts with ",
                      QuoteForMessage(bytes.substr(0, 16)), ")");
}

absl::StatusOr<std::unique_ptr<ByteSource>> OpenMemoryByteSource(absl::string_view bytes) {
  return OpenSniffed(std::make_unique<MemoryInput>(bytes), "the input");
}

}  // namespace gpuidle::internal
