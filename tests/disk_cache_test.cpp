// The persistent kernel cache (runtime/disk_cache.h): entries round-trip, and every bad entry or folder is
// refused rather than loaded. tests/kernel_cache_test.sh runs it end to end across processes.
#include "runtime/disk_cache.h"
#include "support/environment.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace gj {
namespace {

namespace fs = std::filesystem;

// A fresh cache folder for one test, named by GJ_CACHE_DIR while the test runs.
class CacheDir {
 public:
  explicit CacheDir(const std::string& tag)
      : dir_(fs::temp_directory_path() / fmt::format("gj_disk_cache_test_{}_{}", tag, getpid())) {
    fs::remove_all(dir_);
    old_ = environment().cacheDir;
    setenv("GJ_CACHE_DIR", dir_.c_str(), 1);
    refreshEnvironment();
  }
  ~CacheDir() {
    if (old_) setenv("GJ_CACHE_DIR", old_->c_str(), 1);
    else unsetenv("GJ_CACHE_DIR");
    refreshEnvironment();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  const fs::path& path() const { return dir_; }
  // The one entry the folder holds.
  fs::path entry() const {
    fs::path found;
    int n = 0;
    for (const auto& e : fs::directory_iterator(dir_))
      if (e.path().extension() == ".gjk") {
        found = e.path();
        ++n;
      }
    EXPECT_EQ(n, 1);
    return found;
  }

 private:
  fs::path dir_;
  std::optional<std::string> old_;
};

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void writeFile(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

const std::string kKey = "graphjit test | LLVM x | cpu y\ndefine void @k() { ret void }";
const std::string kPayload = std::string("\x7f" "ELF object bytes \0 with a zero", 31);

TEST(DiskCache, AStoredEntryLoadsBackAndCountsAHit) {
  CacheDir d("roundtrip");
  EXPECT_FALSE(diskCacheLoad("llvm-object", kKey));  // a miss: the folder is empty
  diskCacheStore("llvm-object", kKey, kPayload);
  const int64_t before = diskCacheHitsOnThisThread();
  auto got = diskCacheLoad("llvm-object", kKey);
  ASSERT_TRUE(got);
  EXPECT_EQ(*got, kPayload);
  EXPECT_EQ(diskCacheHitsOnThisThread(), before + 1);
  // Another kind under the same key is another entry.
  EXPECT_FALSE(diskCacheLoad("cuda-image", kKey));
  // The folder is this user's alone.
  struct stat st {};
  ASSERT_EQ(::stat(d.path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 077, 0u);
  // No temporary file is left beside the entry.
  int files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(d.path())) ++files;
  EXPECT_EQ(files, 1);
}

TEST(DiskCache, ACorruptEntryIsIgnoredAndReplaced) {
  CacheDir d("corrupt");
  diskCacheStore("llvm-object", kKey, kPayload);
  const fs::path entry = d.entry();
  std::string bytes = readFile(entry);
  bytes[bytes.size() - 12] ^= 0x40;  // a payload byte
  writeFile(entry, bytes);
  const int64_t rejected = diskCacheStats().rejected;
  testing::internal::CaptureStderr();
  EXPECT_FALSE(diskCacheLoad("llvm-object", kKey));
  EXPECT_NE(testing::internal::GetCapturedStderr().find("checksum mismatch"), std::string::npos);
  EXPECT_EQ(diskCacheStats().rejected, rejected + 1);
  // The recompiled kernel's store replaces it.
  diskCacheStore("llvm-object", kKey, kPayload);
  auto got = diskCacheLoad("llvm-object", kKey);
  ASSERT_TRUE(got);
  EXPECT_EQ(*got, kPayload);
}

TEST(DiskCache, TruncatedAndForeignEntriesAreIgnored) {
  CacheDir d("truncated");
  diskCacheStore("llvm-object", kKey, kPayload);
  const fs::path entry = d.entry();
  const std::string whole = readFile(entry);
  for (size_t keep : {size_t{0}, size_t{5}, size_t{20}, whole.size() - 1}) {
    writeFile(entry, whole.substr(0, keep));
    testing::internal::CaptureStderr();
    EXPECT_FALSE(diskCacheLoad("llvm-object", kKey)) << keep << " bytes";
    testing::internal::GetCapturedStderr();
  }
  // An entry under this key's file name that holds another key (a hash collision, or a file copied in).
  const std::string otherKey = kKey + " ";
  diskCacheStore("llvm-object", otherKey, kPayload);
  fs::path otherEntry;
  for (const auto& e : fs::directory_iterator(d.path()))
    if (e.path() != entry) otherEntry = e.path();
  fs::rename(otherEntry, entry);
  testing::internal::CaptureStderr();
  EXPECT_FALSE(diskCacheLoad("llvm-object", kKey));
  EXPECT_NE(testing::internal::GetCapturedStderr().find("holds another kernel"), std::string::npos);
}

TEST(DiskCache, AFolderOthersMayWriteToIsRefused) {
  CacheDir d("shared");
  fs::create_directories(d.path());
  fs::permissions(d.path(), fs::perms::all);
  EXPECT_NE(privateFolderProblem(d.path()).find("other users may write to it"), std::string::npos);
  testing::internal::CaptureStderr();
  diskCacheStore("llvm-object", kKey, kPayload);
  EXPECT_FALSE(diskCacheLoad("llvm-object", kKey));
  EXPECT_NE(testing::internal::GetCapturedStderr().find("is not used: other users may write to it"), std::string::npos);
  EXPECT_TRUE(fs::is_empty(d.path()));
}

TEST(DiskCache, OffStoresNothing) {
  CacheDir d("off");
  setenv("GJ_CACHE_DIR", "off", 1);
  refreshEnvironment();
  EXPECT_FALSE(diskCacheDir());
  diskCacheStore("llvm-object", kKey, kPayload);
  EXPECT_FALSE(diskCacheLoad("llvm-object", kKey));
  EXPECT_FALSE(fs::exists(d.path()));
}

TEST(DiskCache, TheFolderIsTrimmedToItsBoundLeastRecentlyUsedFirst) {
  CacheDir d("bound");
  setenv("GJ_CACHE_MAX_MB", "1", 1);
  refreshEnvironment();
  const std::string big(300 * 1024, 'x');  // three fit in 1 MB, four do not
  for (int i = 0; i < 3; ++i) {
    diskCacheStore("llvm-object", kKey + std::to_string(i), big);
    // Older by a minute each: modification times order the entries.
    for (const auto& e : fs::directory_iterator(d.path()))
      fs::last_write_time(e.path(), fs::last_write_time(e.path()) - std::chrono::minutes(1));
  }
  const int64_t evicted = diskCacheStats().evicted;
  EXPECT_TRUE(diskCacheLoad("llvm-object", kKey + "0"));  // used: now more recent than 1 and 2
  EXPECT_EQ(diskCacheStats().evicted, evicted);  // 0.9 MB: within the bound
  diskCacheStore("llvm-object", kKey + "3", big);  // 1.2 MB in all: over it
  unsetenv("GJ_CACHE_MAX_MB");
  refreshEnvironment();
  EXPECT_EQ(diskCacheStats().evicted, evicted + 1);
  EXPECT_FALSE(diskCacheLoad("llvm-object", kKey + "1"));  // the least recently used went
  for (const char* kept : {"0", "2", "3"}) EXPECT_TRUE(diskCacheLoad("llvm-object", kKey + kept)) << kept;
  uintmax_t total = 0;
  for (const auto& e : fs::directory_iterator(d.path())) total += e.file_size();
  EXPECT_LE(total, 1024u * 1024u);
}

}  // namespace
}  // namespace gj
