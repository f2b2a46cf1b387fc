// The ten dtypes: PyTorch's type promotion as a table (tests/data/promotion, written by gen/promotion.py
// with PyTorch), float16 and bfloat16 rounding, and casts between every pair of dtypes.
#include "runtime/tensor.h"
#include "support/half.h"
#include "tests/support/reference.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <limits>

namespace gj {
namespace {

using nlohmann::json;

DType named(const std::string& name) {
  for (DType t : kAllDTypes)
    if (dtypeName(t) == name) return t;
  throw std::runtime_error("promotion table: unknown dtype " + name);
}

json promotionTable() {
  const std::string path = test::dataDir() + "/promotion/table.json";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  return json::parse(in);
}

TEST(TypePromotion, PromoteTypesMatchesPyTorchForEveryPair) {
  const json t = promotionTable();
  ASSERT_EQ(t["promote_types"].size(), 100u);
  for (const json& row : t["promote_types"])
    EXPECT_EQ(dtypeName(promoteTypes(named(row[0]), named(row[1]))), row[2].get<std::string>())
        << row[0] << " with " << row[1];
}

TEST(TypePromotion, ResultTypeBesideNumbersAndZeroDimTensorsMatchesPyTorch) {
  const json t = promotionTable();
  ASSERT_EQ(t["with_number"].size(), 30u);
  for (const json& row : t["with_number"]) {
    const std::string kind = row[1];
    const DType number = kind == "bool" ? DType::Bool : kind == "int" ? DType::Int64 : DType::Float64;
    EXPECT_EQ(dtypeName(resultType({{named(row[0]), OperandKind::Dimensioned}, {number, OperandKind::Number}})),
              row[2].get<std::string>())
        << row[0] << " beside a " << kind;
  }
  ASSERT_EQ(t["with_zero_dim"].size(), 100u);
  for (const json& row : t["with_zero_dim"])
    EXPECT_EQ(dtypeName(resultType({{named(row[0]), OperandKind::Dimensioned}, {named(row[1]), OperandKind::ZeroDim}})),
              row[2].get<std::string>())
        << row[0] << " beside a 0-dim " << row[1];
}

TEST(HalfPrecision, Float16RoundsToNearestEvenAcrossItsRange) {
  // exact values, ties to even, overflow, the subnormals and below them, NaN and the signs of zero
  EXPECT_EQ(Half(1.0f).bits, 0x3c00);
  EXPECT_EQ(Half(-2.5f).bits, 0xc100);
  EXPECT_EQ(Half(65504.0f).bits, 0x7bff);
  EXPECT_EQ(Half(65519.0f).bits, 0x7bff);            // below the halfway point to 65536
  EXPECT_EQ(Half(65520.0f).bits, 0x7c00);            // the tie rounds to even: inf
  EXPECT_EQ(Half(2049.0f).bits, Half(2048.0f).bits);  // a tie between 2048 and 2050
  EXPECT_EQ(Half(2051.0f).bits, Half(2052.0f).bits);
  EXPECT_EQ(Half(0x1.0p-24f).bits, 0x0001);          // the least subnormal
  EXPECT_EQ(Half(0x1.0p-25f).bits, 0x0000);          // half of it ties to even: 0
  EXPECT_EQ(Half(0x1.8p-25f).bits, 0x0001);
  EXPECT_EQ(Half(0x1.ff8p-15f).bits, 0x03ff);        // the largest subnormal
  EXPECT_EQ(Half(0x1.ffcp-15f).bits, 0x0400);        // past it, a tie that rounds up to the least normal
  EXPECT_EQ(Half(-0.0f).bits, 0x8000);
  EXPECT_EQ(Half(std::numeric_limits<float>::infinity()).bits, 0x7c00);
  EXPECT_TRUE(std::isnan(static_cast<float>(Half(std::nanf("")))));
  EXPECT_EQ(static_cast<float>(Half(0.1f)), 0.0999755859375f);
  // every float16 survives the trip through float
  for (uint32_t b = 0; b < 0x10000; ++b) {
    Half h;
    h.bits = static_cast<uint16_t>(b);
    const float f = h;
    if (std::isnan(f)) continue;
    ASSERT_EQ(Half(f).bits, h.bits) << std::hex << b;
  }
}

TEST(HalfPrecision, BFloat16KeepsTheUpperHalfRoundedToNearestEven) {
  EXPECT_EQ(BFloat16(1.0f).bits, 0x3f80);
  EXPECT_EQ(static_cast<float>(BFloat16(3.3f)), 3.296875f);
  EXPECT_EQ(BFloat16(std::bit_cast<float>(0x3f808000u)).bits, 0x3f80);  // a tie, to the even 0x3f80
  EXPECT_EQ(BFloat16(std::bit_cast<float>(0x3f818000u)).bits, 0x3f82);  // a tie, to the even 0x3f82
  EXPECT_EQ(BFloat16(3.4e38f).bits, 0x7f80);                            // past bfloat16's largest: inf
  EXPECT_TRUE(std::isnan(static_cast<float>(BFloat16(std::nanf("")))));
}

TEST(Casts, EveryPairOfDtypesConvertsAsPyTorch) {
  // 300.7 to int8 is 44 (truncated, then wrapped), -1 to uint8 255, 65520 to float16 inf; back to float64
  // each value is the one its dtype holds.
  const Tensor x = Tensor::fromVector({5}, {300.7, -1.0, 65520.0, 0.1, -0.0}, DType::Float64);
  EXPECT_EQ(x.to(DType::Int8).item(0), 44);
  EXPECT_EQ(x.to(DType::UInt8).item(1), 255);
  EXPECT_TRUE(std::isinf(x.to(DType::Float16).item(2)));
  EXPECT_EQ(x.to(DType::BFloat16).item(3), 0.10009765625);
  EXPECT_TRUE(std::signbit(x.to(DType::Float16).item(4)));
  EXPECT_EQ(Tensor::fromVector({1}, {70000.0}, DType::Int64).to(DType::Int16).item(), 70000 - 65536);
  EXPECT_EQ(Tensor::fromVector({1}, {0.5}, DType::Float16).to(DType::Bool).item(), 1.0);
  for (DType from : kAllDTypes)
    for (DType to : kAllDTypes) {
      const Tensor small = Tensor::fromVector({3}, {1.0, 0.0, 7.0}, from);  // every dtype holds these
      const Tensor y = small.to(to);
      EXPECT_EQ(y.dtype(), to);
      for (int64_t i = 0; i < 3; ++i)
        EXPECT_EQ(y.item(i), to == DType::Bool ? (small.item(i) != 0) : small.item(i))
            << dtypeName(from) << " to " << dtypeName(to);
    }
}

}  // namespace
}  // namespace gj
