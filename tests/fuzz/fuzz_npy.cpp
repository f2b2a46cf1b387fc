// libFuzzer target: the .npy reader. Any input may be rejected with a gj::Error; an accepted one
// gives a tensor whose shape and dtype fit in the bytes after the 10-byte minimum header.
#include "runtime/npy.h"
#include "support/error.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  gj::Tensor t;
  try {
    t = gj::parseNpy(bytes, "<fuzz>");
  } catch (const gj::Error&) {
    return 0;
  }
  size_t nbytes = static_cast<size_t>(t.numel()) * gj::dtypeSize(t.dtype());
  if (nbytes + 10 > size) {
    std::fprintf(stderr, "a %zu-byte file was read as %zu bytes of data\n", size, nbytes);
    std::abort();
  }
  return 0;
}
