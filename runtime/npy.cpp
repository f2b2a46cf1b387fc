#include "runtime/npy.h"

#include "support/error.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>

namespace gj {

static std::string_view descrOf(DType t) {
  switch (t) {
    case DType::Float32: return "<f4";
    case DType::Float64: return "<f8";
    case DType::Int64: return "<i8";
    case DType::Bool: return "|b1";
    case DType::UInt8: return "|u1";
    case DType::Int8: return "|i1";
    case DType::Int16: return "<i2";
    case DType::Int32: return "<i4";
    case DType::Float16: return "<f2";
    // numpy has no bfloat16: its files hold the bits as 2-byte voids (a.view(numpy.uint16) reads them)
    case DType::BFloat16: return "|V2";
  }
  return "?";
}

// Finds `'key':` in the header dict and returns the text after it, trimmed of leading spaces.
static std::string_view valueAfter(std::string_view header, std::string_view key, const std::string& what) {
  std::string quoted = "'" + std::string(key) + "'";
  size_t at = header.find(quoted);
  USER_CHECK(at != std::string_view::npos, "{}: .npy header has no {} entry (header: {})", what, quoted, header);
  size_t colon = header.find(':', at + quoted.size());
  USER_CHECK(colon != std::string_view::npos, "{}: malformed .npy header near {}", what, quoted);
  std::string_view rest = header.substr(colon + 1);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  return rest;
}

static Shape parseShape(std::string_view v, const std::string& what) {
  USER_CHECK(!v.empty() && v.front() == '(', "{}: .npy shape must be a tuple, got '{}'", what, v.substr(0, 20));
  size_t close = v.find(')');
  USER_CHECK(close != std::string_view::npos, "{}: unterminated shape tuple in .npy header", what);
  Shape shape;
  std::string_view body = v.substr(1, close - 1);
  size_t i = 0;
  while (i < body.size()) {
    while (i < body.size() && (body[i] == ' ' || body[i] == ',')) ++i;
    if (i >= body.size()) break;
    size_t j = i;
    while (j < body.size() && body[j] >= '0' && body[j] <= '9') ++j;
    USER_CHECK(j > i && j - i <= 18, "{}: bad dimension '{}' in .npy shape ({})", what, body.substr(i, 10), body);
    shape.push_back(std::stoll(std::string(body.substr(i, j - i))));
    i = j;
  }
  return shape;
}

Tensor parseNpy(std::string_view bytes, const std::string& what) {
  USER_CHECK(bytes.size() >= 10 && bytes.substr(0, 6) == "\x93NUMPY", "{}: not a .npy file (bad magic)", what);
  const auto major = static_cast<unsigned char>(bytes[6]);
  USER_CHECK(major >= 1 && major <= 3, "{}: unsupported .npy format version {}", what, major);
  size_t headerLen = 0, pos = 0;
  if (major == 1) {
    headerLen = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    pos = 10;
  } else {
    USER_CHECK(bytes.size() >= 12, "{}: truncated .npy header", what);
    for (int i = 3; i >= 0; --i) headerLen = (headerLen << 8) | static_cast<unsigned char>(bytes[8 + i]);
    pos = 12;
  }
  USER_CHECK(bytes.size() >= pos + headerLen, "{}: truncated .npy header ({} of {} bytes)", what, bytes.size() - pos,
             headerLen);
  std::string_view header = bytes.substr(pos, headerLen);
  std::string_view descr = valueAfter(header, "descr", what);
  std::string_view fortran = valueAfter(header, "fortran_order", what);
  USER_CHECK(fortran.substr(0, 5) == "False", "{}: Fortran-order arrays are not supported; save with "
             "numpy.ascontiguousarray first", what);
  Shape shape = parseShape(valueAfter(header, "shape", what), what);
  std::optional<DType> dtype;
  for (DType t : kAllDTypes)
    if (descr.substr(0, 5) == "'" + std::string(descrOf(t)) + "'") dtype = t;
  USER_CHECK(dtype.has_value(),
             "{}: unsupported .npy dtype {}; expected <f4, <f8, <i8, |b1, |u1, |i1, <i2, <i4, <f2 or |V2 (bfloat16)",
             what, descr.substr(0, descr.find(',')));
  // Every dimension is at most 18 digits, but their product can still overflow: count with checks,
  // so that a hostile shape is an error naming the file, never a wrapped size. Strides treat a
  // zero-size dimension as 1, so the span counts it as 1; the data needs no more than the span.
  std::string_view data = bytes.substr(pos + headerLen);
  size_t span = dtypeSize(*dtype), need = span;
  for (int64_t d : shape) {
    USER_CHECK(!__builtin_mul_overflow(span, std::max<size_t>(d, 1), &span) && span <= PTRDIFF_MAX,
               "{}: .npy shape {} is too large: its byte count overflows", what, shapeStr(shape));
    need *= static_cast<size_t>(d);
  }
  USER_CHECK(data.size() >= need, "{}: truncated .npy data: {} bytes for shape {} of {}, expected {}", what,
             data.size(), shapeStr(shape), dtypeName(*dtype), need);
  Tensor t = Tensor::empty(std::move(shape), *dtype);
  if (need) std::memcpy(t.rawData(), data.data(), need);
  return t;
}

Tensor readNpy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  USER_CHECK(in.good(), "cannot open '{}': no such file or not readable", path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return parseNpy(ss.str(), path);
}

void writeNpy(const std::string& path, const Tensor& tin) {
  Tensor t = tin.contiguous();
  std::string shape = "(";
  for (int64_t s : t.sizes()) shape += std::to_string(s) + ", ";
  if (t.dim() > 1) shape.resize(shape.size() - 2);
  if (t.dim() == 1) shape.resize(shape.size() - 1);
  shape += ")";
  std::string header =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descrOf(t.dtype()), shape);
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  USER_CHECK(out.good(), "cannot write '{}': {}; hint: the folder must exist and be writable", path,
             std::strerror(errno));
  out.write("\x93NUMPY\x01\x00", 8);
  char len[2] = {static_cast<char>(header.size() & 0xff), static_cast<char>(header.size() >> 8)};
  out.write(len, 2);
  out << header;
  out.write(static_cast<const char*>(t.rawData()), static_cast<std::streamsize>(t.numel() * dtypeSize(t.dtype())));
  out.close();
  USER_CHECK(out.good(), "error writing '{}': {} (a full disk?)", path, std::strerror(errno));
}

}  // namespace gj
