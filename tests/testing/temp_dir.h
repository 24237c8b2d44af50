// Scratch files for tests: a fresh directory per test, removed with everything in it.
//
//   TempDir dir;
//   const std::string path = dir.Write("trace.json", R"({"traceEvents": []})");
//   EXPECT_THAT(dir.List(), ElementsAre("trace.json"));
#ifndef GPUIDLE_TESTS_TESTING_TEMP_DIR_H_
#define GPUIDLE_TESTS_TESTING_TEMP_DIR_H_

#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"

namespace gpuidle::testing {

// The names in a directory (not recursive), sorted.
inline std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class TempDir {
 public:
  TempDir() {
    const std::filesystem::path base = std::filesystem::temp_directory_path();
    std::string tmpl = (base / "gpuidle_test.XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) {
      ADD_FAILURE() << "mkdtemp failed for " << tmpl;
    }
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string Path(absl::string_view name) const {
    return path_ + "/" + std::string(name.data(), name.size());
  }

  // Writes bytes to name in the directory; returns the full path.
  std::string Write(absl::string_view name, absl::string_view bytes) const {
    const std::string p = Path(name);
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    f.close();
    EXPECT_TRUE(f.good()) << "cannot write " << p;
    return p;
  }

  // The names in the directory (not recursive), sorted.
  std::vector<std::string> List() const { return ListDir(path_); }

 private:
  std::string path_;
};

inline std::string ReadFileOrDie(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f.good()) << "cannot read " << path;
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// One gzip member holding bytes (what `gzip` writes).
inline std::string Gzip(absl::string_view bytes) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY),
            Z_OK);
  std::string out(deflateBound(&z, static_cast<uLong>(bytes.size())) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// The bytes of one gzip member (what Gzip or `gzip` wrote).
inline std::string Gunzip(absl::string_view gz) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  z.avail_in = static_cast<uInt>(gz.size());
  std::string out;
  char chunk[1 << 16];
  int r = Z_OK;
  while (r == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(chunk);
    z.avail_out = sizeof(chunk);
    r = inflate(&z, Z_NO_FLUSH);
    out.append(chunk, sizeof(chunk) - z.avail_out);
  }
  EXPECT_EQ(r, Z_STREAM_END);
  inflateEnd(&z);
  return out;
}

}  // namespace gpuidle::testing

#endif  // GPUIDLE_TESTS_TESTING_TEMP_DIR_H_
