#pragma once
// The persistent kernel cache: compiled kernels kept on disk between processes (LLVM object code for the
// CPU, NVRTC's cubin or PTX for CUDA), so that a second process compiles nothing it compiled before.
//
// Each entry is one file, named by a hash of its key: the kernel's canonical source and everything else
// that changes the code (graphjit's version, the compiler's version, the target CPU and its features or
// the GPU architecture, the options). The file holds the whole key, the payload and a checksum of both;
// an entry that is truncated, corrupt or holds another key is ignored with a warning (and replaced by
// the recompiled kernel), never loaded. Entries are written to a file of their own and renamed into place,
// so readers never see half an entry. The folder is bounded in size: the least recently used entries go.
//
// Where (read on every call, so tests and users may change it at run time):
//   GJ_CACHE_DIR=DIR     the folder; GJ_CACHE_DIR=off disables the cache
//   otherwise            $XDG_CACHE_HOME/graphjit, or $HOME/.cache/graphjit
//   GJ_CACHE_MAX_MB=N    the bound (default 512)
// A folder that is not this user's, or that others may write to, is refused with a warning: what is
// loaded from it becomes code this process runs.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace gj {

/// The folder entries go to; nullopt when the cache is off (GJ_CACHE_DIR=off, or no home folder).
std::optional<std::filesystem::path> diskCacheDir();

/// Why `dir` may not hold code this process loads: it is not a folder, not this user's, or others may
/// write to it. Empty when it may.
std::string privateFolderProblem(const std::filesystem::path& dir);

/// The payload stored under (`kind`, `key`), or nullopt (a miss, the cache off, or a bad entry, which is
/// reported on standard error). `kind` names the payload's format ("llvm-object", "cubin").
std::optional<std::string> diskCacheLoad(std::string_view kind, std::string_view key);

/// Stores `payload` under (`kind`, `key`), atomically, then trims the folder to its bound. Failures to
/// write are reported once and otherwise ignored: the cache only saves time.
void diskCacheStore(std::string_view kind, std::string_view key, std::string_view payload);

struct DiskCacheStats {
  int64_t hits = 0;
  int64_t misses = 0;
  int64_t stores = 0;
  int64_t rejected = 0;  ///< entries ignored as truncated, corrupt or foreign
  int64_t evicted = 0;
};
/// This process's totals.
DiskCacheStats diskCacheStats();
/// Hits on the calling thread so far: a compile step reads it before and after a build to learn whether
/// the build came from disk.
int64_t diskCacheHitsOnThisThread();

/// FNV-1a, 64 bits: entry names and checksums.
uint64_t fnv1a64(std::string_view bytes, uint64_t seed = 14695981039346656037ull);

}  // namespace gj
