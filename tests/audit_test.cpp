// The edge-case audit (tests/data/audit, written by gen/audit.py with PyTorch): reductions of 0-d tensors,
// scalars beside integer and bool tensors, and every gradient mask at NaN, +-inf, +-0 and its bounds. Each
// case is PyTorch's printed graph with its inputs, outputs and gradients; here it runs under one fuser x
// executor x device per test, every run of the executor compared (the profiling runs and the optimized
// one). Result dtypes must be PyTorch's, integers and bools exact, NaN and the infinities where PyTorch
// has them, the finite rest within 1e-5 (outputs) and 1e-4 (gradients).
#include "executors/function.h"
#include "ir/parser.h"
#include "passes/frontend.h"
#include "passes/shape_propagation.h"
#include "runtime/cuda/device.h"
#include "tests/support/build_config.h"
#include "support/environment.h"
#include "tests/support/reference.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <fstream>

namespace gj {
namespace {

using nlohmann::json;

// Cases graphjit still refuses, with a clear error (PyTorch's fuser-tests issue takes them on): each must
// fail with this text on every path (on CUDA only, where `cudaOnly`), never run to a wrong answer. Empty
// while every case runs; a case added here must name its error.
struct Refusal {
  const char* caseName;
  bool cudaOnly;
  const char* because;
};
constexpr std::array<Refusal, 0> kRefused{};

const char* refusal(const std::string& name, DeviceKind device) {
  for (const Refusal& r : kRefused)
    if (name == r.caseName && (!r.cudaOnly || device == DeviceKind::Cuda)) return r.because;
  return nullptr;
}

DType dtypeOf(const std::string& name) {
  for (DType t : kAllDTypes)
    if (dtypeName(t) == name) return t;
  throw std::runtime_error("audit table: unknown dtype " + name);
}

double number(const json& v) {
  return v.is_string() ? std::strtod(v.get<std::string>().c_str(), nullptr) : v.get<double>();
}

// A table entry: a tensor {dtype, shape, values} or a scalar {scalar, value}.
IValue decode(const json& e) {
  if (e.contains("scalar")) {
    const std::string kind = e["scalar"];
    if (kind == "bool") return IValue(e["value"].get<bool>());
    if (kind == "int") return IValue(e["value"].get<int64_t>());
    return IValue(number(e["value"]));
  }
  Shape shape;
  for (const json& d : e["shape"]) shape.push_back(d.get<int64_t>());
  const DType dtype = dtypeOf(e["dtype"]);
  if (isIntegral(dtype)) {  // exactly: int64's ends are not doubles
    Tensor t = Tensor::empty(shape, DType::Int64);
    int64_t* p = t.data<int64_t>();
    for (const json& v : e["values"]) *p++ = v.get<int64_t>();
    return IValue(t.to(dtype));
  }
  std::vector<double> values;
  for (const json& v : e["values"]) values.push_back(v.is_boolean() ? v.get<bool>() : number(v));
  return IValue(Tensor::fromVector(shape, values, dtypeOf(e["dtype"])));
}

json readTable(const std::string& name) {
  const std::string path = test::dataDir() + "/" + name + "/table.json";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  return json::parse(in);
}

const json& auditTable() {
  static const json t = readTable("audit");
  return t;
}

const json& conformanceTable() {
  static const json t = readTable("conformance");
  return t;
}

// float16 and bfloat16 results within one unit in their last place (PyTorch's libm and the host's may
// differ by one in float32, which a rounding to 11 or 8 bits can show); the rest as the header says.
double outputTolerance(const Tensor& want) {
  if (want.dtype() == DType::Float16) return 1e-3;
  if (want.dtype() == DType::BFloat16) return 8e-3;
  return 1e-5;
}

// Where `got` differs from PyTorch's `want` beyond `tol` ("" when it does not).
std::string mismatch(const Tensor& got0, const Tensor& want, double tol) {
  const Tensor got = got0.to(DeviceKind::Cpu);
  if (got.dtype() != want.dtype())
    return fmt::format("dtype {} where PyTorch's is {}", dtypeName(got.dtype()), dtypeName(want.dtype()));
  if (got.sizes() != want.sizes())
    return fmt::format("shape {} where PyTorch's is {}", shapeStr(got.sizes()), shapeStr(want.sizes()));
  if (!isFloating(want.dtype())) {  // integers and bools exactly, through int64 (not through double)
    const Tensor g = got.to(DType::Int64).contiguous(), w = want.to(DType::Int64).contiguous();
    if (std::equal(g.data<int64_t>(), g.data<int64_t>() + g.numel(), w.data<int64_t>())) return "";
    std::string values;
    for (int64_t i = 0; i < g.numel(); ++i) values += fmt::format("{}{} ({})", i ? ", " : "", g.data<int64_t>()[i], w.data<int64_t>()[i]);
    return fmt::format("integers differ; got (PyTorch): {}", values);
  }
  const double err = relativeError(got, want);
  if (err <= tol) return "";
  std::string values;
  for (int64_t i = 0; i < got.numel(); ++i)
    values += fmt::format("{}{} ({})", i ? ", " : "", got.item(i), want.item(i));
  return fmt::format("relative error {:.3g} > {:g}; got (PyTorch): {}", err, tol, values);
}

// A scalar output (a graph that returns an int, float or bool) against PyTorch's: the same kind, and the same
// value (floats to 1e-12: PyTorch's interpreter computes them in double, as graphjit's does).
std::string scalarMismatch(const IValue& got, const IValue& want) {
  const auto kind = [](const IValue& v) { return v.isInt() ? "int" : v.isDouble() ? "float" : v.isBool() ? "bool" : "other"; };
  if (got.isTensor() || want.isTensor() || std::string_view(kind(got)) != kind(want))
    return fmt::format("{} where PyTorch's is {}", got.describe(), want.describe());
  const bool same = got.isDouble() ? (std::isnan(got.toDouble()) && std::isnan(want.toDouble())) ||
                                         std::abs(got.toDouble() - want.toDouble()) <=
                                             1e-12 * std::max(1.0, std::abs(want.toDouble()))
                    : got.isInt()  ? got.toInt() == want.toInt()
                                   : got.toBool() == want.toBool();
  return same ? "" : fmt::format("{} where PyTorch's is {}", got.describe(), want.describe());
}

struct Combination {
  FuserKind fuser;
  ExecutorKind executor;
  DeviceKind device;
};

// One case under one fuser x executor x device: what differs from PyTorch, one line each (every run of the
// executor compared: the profiling runs and the optimized one); empty when the case matches. An error the
// run raises is thrown on to the caller.
std::vector<std::string> caseProblems(const json& c, const std::string& table, FuserKind fuser, ExecutorKind executor,
                                      DeviceKind device) {
  const std::string name = c["name"];
  std::vector<std::string> problems;
  std::vector<IValue> inputs;
  std::vector<bool> requiresGrad;
  for (const json& e : c["inputs"]) {
    inputs.push_back(decode(e));
    // as the generator asks: float32 and float64 leaves (not float16 or bfloat16)
    requiresGrad.push_back(inputs.back().isTensor() && (inputs.back().toTensor().dtype() == DType::Float32 ||
                                                        inputs.back().toTensor().dtype() == DType::Float64));
  }
  std::vector<Tensor> gradOutputs;
  for (const json& g : c["grad_outputs"]) gradOutputs.push_back(g.is_null() ? Tensor() : decode(g).toTensor());
  bool backward = false;
  for (const json& g : c["grads"]) backward = backward || !g.is_null();
  auto g = parseIR(c["graph"].get<std::string>(), table + "/" + name);
  lowerTorchScript(*g);
  checkShapes(*g);
  Function f(*g, {.fuser = fuser, .executor = executor, .device = device});
  const int runs = executor == ExecutorKind::Profiling ? f.options().profilingRuns + 1 : 1;
  for (int run = 1; run <= runs; ++run) {
    auto outs = f.forward(inputs, backward ? requiresGrad : std::vector<bool>{});
    if (outs.size() != c["outputs"].size()) {
      problems.push_back(fmt::format("run {}: {} outputs where PyTorch has {}", run, outs.size(), c["outputs"].size()));
      return problems;
    }
    for (size_t k = 0; k < outs.size(); ++k) {
      const IValue expected = decode(c["outputs"][k]);
      if (!outs[k].isTensor() || !expected.isTensor()) {
        if (std::string m = scalarMismatch(outs[k], expected); !m.empty())
          problems.push_back(fmt::format("run {}: output {}: {}", run, k, m));
        continue;
      }
      const Tensor want = expected.toTensor();
      if (std::string m = mismatch(outs[k].toTensor(), want, outputTolerance(want)); !m.empty())
        problems.push_back(fmt::format("run {}: output {}: {}", run, k, m));
    }
    if (!backward) continue;
    auto grads = f.backward(gradOutputs);
    for (size_t i = 0; i < inputs.size(); ++i) {
      const json& want = c["grads"][i];
      if (want.is_null()) continue;
      if (i >= grads.size() || !grads[i].defined()) {
        problems.push_back(fmt::format("run {}: no gradient for input {}", run, i));
        continue;
      }
      if (std::string m = mismatch(grads[i], decode(want).toTensor(), 1e-4); !m.empty())
        problems.push_back(fmt::format("run {}: gradient of input {}: {}", run, i, m));
    }
  }
  return problems;
}

// Every case of a table (audit/ or conformance/) under one fuser x executor x device.
void runCases(const json& cases, const std::string& table, FuserKind fuser, ExecutorKind executor, DeviceKind device) {
  for (const json& c : cases) {
    const std::string name = c["name"];
    SCOPED_TRACE(name + ": " + c["what"].get<std::string>());
    try {
      for (const std::string& p : caseProblems(c, table, fuser, executor, device)) ADD_FAILURE() << p;
      EXPECT_EQ(refusal(name, device), nullptr) << "the case now runs and matches PyTorch: take it off kRefused";
    } catch (const Error& e) {
      const char* because = refusal(name, device);
      if (!because) ADD_FAILURE() << "refused: " << e.what();
      else EXPECT_NE(std::string(e.what()).find(because), std::string::npos) << e.what();
    }
  }
}

// A case table from elsewhere (GJ_CASE_TABLE: bench/fuser_tests/run.sh's, of PyTorch's own op samples) under
// every fuser x executor on the CPU, or on CUDA with GJ_CASE_DEVICE=cuda. Each outcome goes to
// GJ_CASE_OUTCOMES as a JSON line (case, fuser, executor, outcome: "match", "mismatch: ..." or "refused:
// ..."), written as it is known so that a crash leaves the cases before it; a mismatch fails the test, a
// refusal does not.
TEST(ExternalTable, EveryCaseMatchesPyTorchOrIsRefused) {
  const Environment env = environment();
  if (!env.caseTable) GTEST_SKIP() << "GJ_CASE_TABLE is not set (bench/fuser_tests/run.sh sets it)";
  const std::string path = *env.caseTable, deviceName = env.caseDevice.value_or("cpu");
  const auto device = deviceFromName(deviceName);
  ASSERT_TRUE(device.has_value()) << "GJ_CASE_DEVICE is cpu or cuda, not " << deviceName;
  if (*device == DeviceKind::Cpu) SKIP_WITHOUT_LLVM();
  if (*device == DeviceKind::Cuda)
    if (auto d = cuda::device(); !d) GTEST_SKIP() << d.error().what();
  std::ifstream in(path);
  ASSERT_TRUE(in) << "cannot read " << path;
  const json table = json::parse(in);
  std::ofstream outcomes(env.caseOutcomes.value_or("/dev/null"));
  for (const json& c : table["cases"])
    for (FuserKind fuser : allFusers())
      for (ExecutorKind executor : allExecutors()) {
        std::string outcome = "match";
        try {
          const auto problems = caseProblems(c, "external", fuser, executor, *device);
          if (!problems.empty()) outcome = "mismatch: " + problems.front();
        } catch (const Error& e) {
          outcome = std::string("refused: ") + e.what();
        } catch (const std::exception& e) {
          outcome = std::string("mismatch: a ") + typeid(e).name() + ": " + e.what();
        }
        outcomes << json{{"case", c["name"]}, {"fuser", fuserName(fuser)}, {"executor", executorName(executor)},
                         {"outcome", outcome}}.dump() << std::endl;
        if (outcome.starts_with("mismatch"))
          ADD_FAILURE() << c["name"].get<std::string>() << " (" << fuserName(fuser) << ", " << executorName(executor)
                        << "): " << outcome;
      }
}

class Audit : public testing::TestWithParam<Combination> {};
class Conformance : public testing::TestWithParam<Combination> {};

// A table's cases under the combination, skipped where its backend is missing; the table must hold at
// least `least` cases (a truncated file is a failure, not a pass).
void runTable(const Combination& c, const json& table, const std::string& name, size_t least) {
  if (c.fuser != FuserKind::None && c.device == DeviceKind::Cpu) SKIP_WITHOUT_LLVM();
  if (c.device == DeviceKind::Cuda)
    if (auto d = cuda::device(); !d) GTEST_SKIP() << d.error().what();
  ASSERT_GE(table["cases"].size(), least);
  runCases(table["cases"], name, c.fuser, c.executor, c.device);
}

TEST_P(Audit, EveryCaseMatchesPyTorch) { runTable(GetParam(), auditTable(), "audit", 20); }

// The conformance suite (gen/conformance.py): every pointwise op over every dtype and operand kind.
TEST_P(Conformance, EveryOpDTypeAndOperandKindMatchesPyTorch) {
  runTable(GetParam(), conformanceTable(), "conformance", 60);
}

std::vector<Combination> combinations() {
  std::vector<Combination> all;
  for (DeviceKind d : {DeviceKind::Cpu, DeviceKind::Cuda})
    for (FuserKind f : allFusers())
      for (ExecutorKind e : allExecutors()) all.push_back({f, e, d});
  return all;
}

std::string combinationName(const testing::TestParamInfo<Combination>& info) {
  const Combination& p = info.param;
  return fmt::format("{}_{}_{}", fuserName(p.fuser), executorName(p.executor), deviceName(p.device));
}

INSTANTIATE_TEST_SUITE_P(Fusers, Audit, testing::ValuesIn(combinations()), combinationName);
INSTANTIATE_TEST_SUITE_P(Fusers, Conformance, testing::ValuesIn(combinations()), combinationName);

}  // namespace
}  // namespace gj
