// .npy reading and writing, and every kind of bad file.
#include "runtime/npy.h"
#include "support/error.h"
#include "tests/support/reference.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace gj {
namespace {

std::string tmpPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("gj_npy_test_" + name)).string();
}

std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void expectError(const std::string& bytes, const std::string& fragment) {
  try {
    parseNpy(bytes, "x.npy");
    FAIL() << "expected an error containing: " << fragment;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("x.npy"), std::string::npos) << e.what();
  }
}

TEST(Npy, ReadsTheReferenceFiles) {
  Tensor t = readNpy(test::dataDir() + "/lstm_1layer/inputs/input.npy");
  EXPECT_EQ(t.dtype(), DType::Float32);
  EXPECT_EQ(t.sizes(), (Shape{7, 3, 4}));
  Tensor r = readNpy(test::dataDir() + "/lstm_1layer/outputs/hy.npy");
  EXPECT_EQ(r.dtype(), DType::Float64);
  Tensor s = readNpy(test::dataDir() + "/lstm_lm/outputs/loss.npy");
  EXPECT_EQ(s.dim(), 0);
  EXPECT_GT(s.item(), 0);
  Tensor ids = readNpy(test::dataDir() + "/lstm_lm/inputs/tokens.npy");
  EXPECT_EQ(ids.dtype(), DType::Int64);
}

TEST(Npy, RoundTripsEveryDtypeAndNonContiguousViews) {
  for (DType dt : kAllDTypes) {
    Tensor x = Tensor::rand({3, 5}, DType::Float64, 1, 0, 100).to(dt).t();  // written in C order
    std::string p = tmpPath("rt.npy");
    writeNpy(p, x);
    Tensor y = readNpy(p);
    EXPECT_EQ(y.dtype(), dt);
    EXPECT_EQ(y.sizes(), (Shape{5, 3}));
    EXPECT_EQ(test::relError(y, x), 0.0);
    std::remove(p.c_str());
  }
  for (Shape shape : {Shape{}, Shape{4}, Shape{0, 2}}) {
    std::string p = tmpPath("shape.npy");
    writeNpy(p, Tensor::full(shape, DType::Float32, 2.5));
    Tensor y = readNpy(p);
    EXPECT_EQ(y.sizes(), shape);
    if (y.numel()) {
      EXPECT_EQ(y.item(0), 2.5);
    }
    std::remove(p.c_str());
  }
}

TEST(Npy, RejectsBadFiles) {
  std::string p = tmpPath("good.npy");
  writeNpy(p, Tensor::rand({2, 3}, DType::Float32, 2));
  std::string good = readBytes(p);
  std::remove(p.c_str());
  EXPECT_NO_THROW(parseNpy(good, "x.npy"));

  expectError("not an npy file at all", "bad magic");
  expectError(good.substr(0, 5), "bad magic");
  expectError(good.substr(0, 20), "truncated .npy header");
  expectError(good.substr(0, good.size() - 4), "truncated .npy data");
  std::string fortran = good;
  fortran.replace(fortran.find("False"), 5, "True ");
  expectError(fortran, "Fortran-order");
  std::string complex = good;
  complex.replace(complex.find("<f4"), 3, "<c8");
  expectError(complex, "unsupported .npy dtype '<c8'");
  std::string bigEndian = good;
  bigEndian.replace(bigEndian.find("<f4"), 3, ">f4");
  expectError(bigEndian, "unsupported .npy dtype");
  std::string version = good;
  version[6] = 9;
  expectError(version, "unsupported .npy format version 9");
  std::string noShape = good;
  noShape.replace(noShape.find("'shape'"), 7, "'shope'");
  expectError(noShape, "no 'shape' entry");
}

// A version 1.0 file with the given header dictionary and `dataBytes` bytes of data.
std::string npyBytes(const std::string& dict, size_t dataBytes) {
  std::string header = dict + "\n";
  std::string s = "\x93NUMPY\x01";
  s += '\0';
  s += static_cast<char>(header.size() & 0xff);
  s += static_cast<char>(header.size() >> 8);
  return s + header + std::string(dataBytes, '\x01');
}

// Found by fuzzing (tests/fuzz/regressions/npy): shapes whose byte count overflows 64 bits, even with
// a zero-size dimension (strides still span the others), are errors rather than wrapped sizes.
TEST(Npy, RejectsShapesWhoseByteCountOverflows) {
  expectError(npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (999999999999, 999999999999), }", 16),
              "too large");
  expectError(npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 999999999999, 999999999999), }", 0),
              "too large");
  Tensor empty = parseNpy(npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 3), }", 0), "x.npy");
  EXPECT_EQ(empty.sizes(), (Shape{0, 3}));
  Tensor two = parseNpy(npyBytes("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", 16), "x.npy");
  EXPECT_EQ(two.sizes(), (Shape{2}));
  EXPECT_EQ(two.data<int64_t>()[1], 0x0101010101010101);
}

TEST(Npy, MissingFileSaysSo) {
  try {
    readNpy("/nonexistent/dir/x.npy");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open '/nonexistent/dir/x.npy'"), std::string::npos);
  }
}

}  // namespace
}  // namespace gj
