#include "runtime/disk_cache.h"
#include "support/environment.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <vector>

namespace gj {

namespace {

// An entry: kMagic, the key's and the payload's lengths (8 bytes each, little-endian), the key, the
// payload, and fnv1a64 of key and payload (8 bytes).
constexpr std::string_view kMagic = "GJKCACHE1\n";
constexpr std::string_view kSuffix = ".gjk";
constexpr int64_t kDefaultMaxMb = 512;

std::atomic<int64_t> gHits{0}, gMisses{0}, gStores{0}, gRejected{0}, gEvicted{0};
thread_local int64_t tHits = 0;

// Each warning once per process (a bad folder would otherwise be reported for every kernel).
void warnOnce(const std::string& text) {
  static std::mutex mu;
  static std::set<std::string> said;
  std::lock_guard lock(mu);
  if (said.insert(text).second) std::fprintf(stderr, "graphjit: warning: %s\n", text.c_str());
}

void putU64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i) & 0xff));
}

uint64_t getU64(std::string_view in, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(in[at + i])) << (8 * i);
  return v;
}

uint64_t checksum(std::string_view key, std::string_view payload) { return fnv1a64(payload, fnv1a64(key)); }

// The folder, made if missing (0700) and checked; nullopt (with a warning) when it may not be used.
std::optional<std::filesystem::path> usableDir() {
  auto dir = diskCacheDir();
  if (!dir) return std::nullopt;
  std::error_code ec;
  if (!std::filesystem::exists(*dir, ec)) {
    std::filesystem::create_directories(*dir, ec);
    if (!ec) std::filesystem::permissions(*dir, std::filesystem::perms::owner_all, ec);
  }
  if (std::string why = privateFolderProblem(*dir); !why.empty()) {
    warnOnce(fmt::format("the kernel cache {} is not used: {}; fix its permissions, or set GJ_CACHE_DIR to "
                         "another folder (or to off)", dir->string(), why));
    return std::nullopt;
  }
  return dir;
}

std::filesystem::path entryPath(const std::filesystem::path& dir, std::string_view kind, std::string_view key) {
  return dir / fmt::format("{}-{:016x}{}", kind, fnv1a64(key, fnv1a64(kind)), kSuffix);
}

int64_t maxBytes() {
  const std::optional<std::string> env = environment().cacheMaxMb;
  int64_t mb = kDefaultMaxMb;
  if (env) {
    char* end = nullptr;
    const long long v = std::strtoll(env->c_str(), &end, 10);
    if (end && *end == '\0' && v > 0) mb = v;
    else warnOnce(fmt::format("GJ_CACHE_MAX_MB='{}' is not a positive number of megabytes; using {}", *env, mb));
  }
  return mb * 1024 * 1024;
}

// Removes the least recently used entries (by modification time, which a hit renews) until the folder's
// entries take at most 90% of the bound.
void trim(const std::filesystem::path& dir) {
  struct Entry {
    std::filesystem::file_time_type when;
    uintmax_t bytes;
    std::filesystem::path path;
  };
  std::vector<Entry> entries;
  uintmax_t total = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() != kSuffix) continue;
    std::error_code fe;
    const uintmax_t bytes = e.file_size(fe);
    const auto when = e.last_write_time(fe);
    if (fe) continue;
    entries.push_back({when, bytes, e.path()});
    total += bytes;
  }
  const auto bound = static_cast<uintmax_t>(maxBytes());
  if (total <= bound) return;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.when < b.when; });
  for (const Entry& e : entries) {
    if (total <= bound / 10 * 9) break;
    if (std::filesystem::remove(e.path, ec)) {
      total -= e.bytes;
      ++gEvicted;
    }
  }
}

}  // namespace

uint64_t fnv1a64(std::string_view bytes, uint64_t seed) {
  uint64_t h = seed;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::optional<std::filesystem::path> diskCacheDir() {
  const Environment env = environment();
  if (env.cacheDir) {
    if (*env.cacheDir == "off") return std::nullopt;
    return std::filesystem::path(*env.cacheDir);
  }
  if (env.xdgCacheHome) return std::filesystem::path(*env.xdgCacheHome) / "graphjit";
  if (env.home) return std::filesystem::path(*env.home) / ".cache" / "graphjit";
  return std::nullopt;
}

std::string privateFolderProblem(const std::filesystem::path& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) return fmt::format("it cannot be read ({})", std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) return "it is not a folder";
  if (st.st_uid != ::getuid()) return "it belongs to another user";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return "other users may write to it";
  return {};
}

std::optional<std::string> diskCacheLoad(std::string_view kind, std::string_view key) {
  auto dir = usableDir();
  if (!dir) return std::nullopt;
  const std::filesystem::path path = entryPath(*dir, kind, key);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ++gMisses;
    return std::nullopt;
  }
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string bytes = buf.str();
  auto reject = [&](const char* why) -> std::optional<std::string> {
    ++gRejected;
    ++gMisses;
    warnOnce(fmt::format("kernel cache entry {} is ignored ({}); the kernel is compiled again and the entry "
                         "replaced", path.string(), why));
    return std::nullopt;
  };
  const size_t head = kMagic.size() + 16;
  if (bytes.size() < head + 8 || std::string_view(bytes).substr(0, kMagic.size()) != kMagic)
    return reject("not a graphjit cache entry, or truncated");
  const uint64_t keyLen = getU64(bytes, kMagic.size()), payloadLen = getU64(bytes, kMagic.size() + 8);
  if (keyLen > bytes.size() || payloadLen > bytes.size() || head + keyLen + payloadLen + 8 != bytes.size())
    return reject("truncated or of the wrong length");
  const std::string_view storedKey = std::string_view(bytes).substr(head, keyLen);
  const std::string_view payload = std::string_view(bytes).substr(head + keyLen, payloadLen);
  if (getU64(bytes, head + keyLen + payloadLen) != checksum(storedKey, payload)) return reject("checksum mismatch");
  if (storedKey != key) return reject("it holds another kernel");
  std::error_code ec;
  std::filesystem::last_write_time(path, std::filesystem::file_time_type::clock::now(), ec);  // recently used
  ++gHits;
  ++tHits;
  return std::string(payload);
}

void diskCacheStore(std::string_view kind, std::string_view key, std::string_view payload) {
  auto dir = usableDir();
  if (!dir) return;
  std::string bytes(kMagic);
  putU64(bytes, key.size());
  putU64(bytes, payload.size());
  bytes.append(key);
  bytes.append(payload);
  putU64(bytes, checksum(key, payload));
  static std::atomic<uint64_t> counter{0};
  const std::filesystem::path path = entryPath(*dir, kind, key);
  const std::filesystem::path tmp = path.string() + fmt::format(".tmp.{}.{}", ::getpid(), counter++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      warnOnce(fmt::format("the kernel cache {} could not be written; kernels are compiled in every process",
                           dir->string()));
      return;
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return;
  }
  ++gStores;
  trim(*dir);
}

DiskCacheStats diskCacheStats() { return {gHits.load(), gMisses.load(), gStores.load(), gRejected.load(), gEvicted.load()}; }

int64_t diskCacheHitsOnThisThread() { return tHits; }

}  // namespace gj
