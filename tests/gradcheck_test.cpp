// Every gradient formula against central finite differences in float64.
#include "executors/autograd.h"
#include "executors/interpreter.h"
#include "ir/parser.h"
#include "passes/util.h"
#include "runtime/ops/ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

namespace gj {
namespace {

struct GradCase {
  const char* name;
  const char* ir;
  std::vector<std::pair<std::string, std::vector<double>>> longs;  // int64 inputs: name -> values
  std::set<std::string> constants = {};  // float inputs that take no gradient (running statistics)
};

const GradCase kCases[] = {
    {"AddSubBroadcastAndAlpha", R"IR(graph(%x : Double(3, 4), %y : Double(4), %z : Double(3, 1)):
  %two : float = prim::Constant[value=2.]()
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::add(%x, %y, %two)
  %b : Tensor = aten::sub(%a, %z, %one)
  %c : Tensor = prim::AutogradAdd(%b, %x)
  return (%c)
)IR", {}},
    {"MulDivBroadcastAndScalars", R"IR(graph(%x : Double(3, 4), %y : Double(1, 4), %z : Double(3, 4)):
  %h : float = prim::Constant[value=0.5]()
  %a : Tensor = aten::mul(%x, %y)
  %b : Tensor = aten::div(%a, %z)
  %c : Tensor = aten::mul(%b, %h)
  %d : Tensor = aten::div(%c, %h)
  return (%d)
)IR", {}},
    {"UnaryFunctions", R"IR(graph(%x : Double(2, 3)):
  %c : float = prim::Constant[value=0.7]()
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::neg(%x)
  %b : Tensor = aten::sigmoid(%x)
  %t : Tensor = aten::tanh(%x)
  %e : Tensor = aten::exp(%x)
  %l : Tensor = aten::log(%x)
  %s : Tensor = aten::sqrt(%x)
  %rs : Tensor = aten::rsqrt(%x)
  %shift : Tensor = aten::sub(%x, %c, %one)
  %r : Tensor = aten::relu(%shift)
  return (%a, %b, %t, %e, %l, %s, %rs, %r)
)IR", {}},
    // Shifted to (-0.5, 0.5) where an op has a kink or a sign to see; clamp with None bounds too.
    {"ActivationsAndBounds", R"IR(graph(%x : Double(3, 4), %y : Double(3, 4), %r : Double(4), %e : Double(3, 4)):
  %c : float = prim::Constant[value=0.7]()
  %one : int = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %three : int = prim::Constant[value=3]()
  %two : float = prim::Constant[value=2.]()
  %half : float = prim::Constant[value=0.5]()
  %lo : float = prim::Constant[value=-0.2]()
  %hi : float = prim::Constant[value=0.25]()
  %slope : float = prim::Constant[value=0.1]()
  %none : NoneType = prim::Constant()
  %s : Tensor = aten::sub(%x, %c, %one)
  %t : Tensor = aten::sub(%y, %c, %one)
  %a1 : Tensor = aten::rsub(%x, %two, %half)
  %a2 : Tensor = aten::rsub(%s, %r, %one)
  %p1 : Tensor = aten::pow(%x, %three)
  %p2 : Tensor = aten::pow(%x, %half)
  %p3 : Tensor = aten::pow(%x, %e)
  %p4 : Tensor = aten::pow(%s, %two)
  %p0 : Tensor = aten::pow(%s, %zero)
  %ab : Tensor = aten::abs(%s)
  %sg : Tensor = aten::sign(%s)
  %rc : Tensor = aten::reciprocal(%x)
  %c1 : Tensor = aten::clamp(%s, %lo, %hi)
  %c2 : Tensor = aten::clamp(%s, %none, %hi)
  %c3 : Tensor = aten::clamp(%s, %lo, %none)
  %c4 : Tensor = aten::clamp_min(%s, %lo)
  %c5 : Tensor = aten::clamp_max(%s, %hi)
  %h : Tensor = aten::hardtanh(%s, %lo, %hi)
  %mx : Tensor = aten::maximum(%s, %t)
  %mn : Tensor = aten::minimum(%s, %r)
  %er : Tensor = aten::erf(%s)
  %sn : Tensor = aten::sin(%s)
  %cs : Tensor = aten::cos(%s)
  %em : Tensor = aten::expm1(%s)
  %lp : Tensor = aten::log1p(%s)
  %at : Tensor = aten::atan(%s)
  %as : Tensor = aten::asin(%s)
  %ac : Tensor = aten::acos(%s)
  %sh : Tensor = aten::sinh(%s)
  %ch : Tensor = aten::cosh(%s)
  %ec : Tensor = aten::erfc(%s)
  %lg : Tensor = aten::lgamma(%s)
  %lx : Tensor = aten::lgamma(%x)
  %f64 : int[] = prim::Constant[value=[1]]()
  %to64 : int = prim::Constant[value=1]()
  %ad : Tensor = prim::cast_on_device(%s, %f64, %to64, %to64)
  %sp : Tensor = aten::softplus(%s, %two, %hi)
  %el : Tensor = aten::elu(%s, %half, %two)
  %a2t : Tensor = aten::atan2(%s, %t)
  %fm : Tensor = aten::fmod(%s, %y)
  %rm : Tensor = aten::remainder(%s, %y)
  %fs : Tensor = aten::fmod(%s, %lo)
  %df : Tensor = prim::div_floor(%s, %y)
  %dt : Tensor = prim::div_trunc(%s, %y)
  %ge : Tensor = aten::gelu(%s)
  %si : Tensor = aten::silu(%s)
  %lr : Tensor = aten::leaky_relu(%s, %slope)
  %s3 : Tensor = aten::mul(%s, %three)
  %fl : Tensor = aten::floor(%s3)
  %ce : Tensor = aten::ceil(%s3)
  %tr : Tensor = aten::trunc(%s3)
  %ro : Tensor = aten::round(%s3)
  %fr : Tensor = aten::frac(%s3)
  %hs : Tensor = aten::hardswish(%s3)
  return (%a1, %a2, %p1, %p2, %p3, %p4, %p0, %ab, %sg, %rc, %c1, %c2, %c3, %c4, %c5, %h, %mx, %mn, %er, %sn, %cs, %em, %lp, %at, %as, %ac, %sh, %ch, %ec, %lg, %lx, %ad, %sp, %el, %a2t, %fm, %rm, %fs, %df, %dt, %ge, %si, %lr, %fl, %ce, %tr, %ro, %fr, %hs)
)IR", {}},
    {"MatrixProducts", R"IR(graph(%a : Double(3, 4), %b : Double(4, 5), %p : Double(2, 3, 4), %q : Double(2, 4, 5), %bias : Double(5), %k : Double(3, 2, 4, 5)):
  %beta : float = prim::Constant[value=0.5]()
  %alpha : float = prim::Constant[value=2.]()
  %m : Tensor = aten::mm(%a, %b)
  %bm : Tensor = aten::bmm(%p, %q)
  %mm3 : Tensor = aten::matmul(%p, %b)
  %mm2 : Tensor = aten::matmul(%a, %b)
  %am : Tensor = aten::addmm(%bias, %a, %b, %beta, %alpha)
  %batched : Tensor = aten::matmul(%p, %q)
  %broadcast : Tensor = aten::matmul(%p, %k)
  %left : Tensor = aten::matmul(%a, %q)
  return (%m, %bm, %mm3, %mm2, %am, %batched, %broadcast, %left)
)IR", {}},
    {"Extrema", R"IR(graph(%x : Double(3, 4, 5)):
  %last : int[] = prim::Constant[value=[-1]]()
  %outer : int[] = prim::Constant[value=[0, 2]]()
  %all : int[] = prim::Constant[value=[]]()
  %yes : bool = prim::Constant[value=1]()
  %no : bool = prim::Constant[value=0]()
  %a : Tensor = aten::amax(%x, %last, %no)
  %b : Tensor = aten::amin(%x, %outer, %yes)
  %c : Tensor = aten::amax(%x, %all, %no)
  %d : Tensor = aten::amin(%x, %last, %yes)
  return (%a, %b, %c, %d)
)IR", {}},
    {"MaxAndMinOverADim", R"IR(graph(%x : Double(3, 4, 5)):
  %last : int = prim::Constant[value=-1]()
  %first : int = prim::Constant[value=0]()
  %yes : bool = prim::Constant[value=1]()
  %no : bool = prim::Constant[value=0]()
  %a : Tensor, %ai : Tensor = aten::max(%x, %last, %no)
  %b : Tensor, %bi : Tensor = aten::min(%x, %first, %yes)
  %s : Tensor = aten::mul(%x, %x)
  %c : Tensor, %ci : Tensor = aten::max(%s, %first, %yes)
  return (%a, %b, %c)
)IR", {}},
    {"WhereAndMaskedFill", R"IR(graph(%x : Double(3, 4), %y : Double(4), %k : Double(4)):
  %t : float = prim::Constant[value=0.7]()
  %half : float = prim::Constant[value=0.5]()
  %fill : float = prim::Constant[value=-2.]()
  %c : Tensor = aten::gt(%x, %t)
  %m : Tensor = aten::le(%k, %half)
  %sq : Tensor = aten::mul(%x, %x)
  %a : Tensor = aten::where(%c, %sq, %y)
  %b : Tensor = aten::where(%c, %half, %y)
  %d : Tensor = aten::where(%m, %x, %fill)
  %e : Tensor = aten::masked_fill(%sq, %m, %fill)
  %f : Tensor = aten::masked_fill(%y, %c, %half)
  return (%a, %b, %d, %e, %f)
)IR", {}, {"k"}},
    {"Linear", R"IR(graph(%x : Double(2, 3, 4), %w : Double(5, 4), %b : Double(5)):
  %y : Tensor = aten::linear(%x, %w, %b)
  return (%y)
)IR", {}},
    {"TransposesAndViews", R"IR(graph(%x : Double(2, 3, 4), %m : Double(3, 4), %c : Double(3, 1)):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %perm : int[] = prim::Constant[value=[2, 0, 1]]()
  %v : int[] = prim::Constant[value=[2, 6]]()
  %r : int[] = prim::Constant[value=[12]]()
  %e : int[] = prim::Constant[value=[3, 4]]()
  %t : Tensor = aten::t(%m)
  %tr : Tensor = aten::transpose(%x, %zero, %two)
  %p : Tensor = aten::permute(%x, %perm)
  %vw : Tensor = aten::view(%m, %v)
  %rs : Tensor = aten::reshape(%t, %r)
  %us : Tensor = aten::unsqueeze(%m, %zero)
  %sq : Tensor = aten::squeeze(%c, %one)
  %ex : Tensor = aten::expand(%c, %e)
  %ct : Tensor = aten::contiguous(%t)
  %ta : Tensor = aten::type_as(%m, %c)
  %double : int = prim::dtype(%c)
  %to : Tensor = aten::to(%m, %double)
  return (%t, %tr, %p, %vw, %rs, %us, %sq, %ex, %ct, %ta, %to)
)IR", {}},
    {"SelectAndSlice", R"IR(graph(%x : Double(5, 4)):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %four : int = prim::Constant[value=4]()
  %s : Tensor = aten::select(%x, %one, %two)
  %sl : Tensor = aten::slice(%x, %zero, %one, %four, %two)
  return (%s, %sl)
)IR", {}},
    {"ChunkUnbindSplit", R"IR(graph(%x : Double(4, 6), %y : Double(3, 4), %z : Double(5, 4)):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %three : int = prim::Constant[value=3]()
  %sizes : int[] = prim::Constant[value=[2, 3]]()
  %c : Tensor[] = aten::chunk(%x, %three, %one)
  %c0 : Tensor, %c1 : Tensor, %c2 : Tensor = prim::ListUnpack(%c)
  %m : Tensor = aten::mul(%c0, %c1)
  %u : Tensor[] = aten::unbind(%y, %zero)
  %u0 : Tensor, %u1 : Tensor, %u2 : Tensor = prim::ListUnpack(%u)
  %uu : Tensor = aten::mul(%u0, %u2)
  %s : Tensor[] = aten::split_with_sizes(%z, %sizes, %zero)
  %s0 : Tensor, %s1 : Tensor = prim::ListUnpack(%s)
  %ss : Tensor = aten::sum(%s1)
  return (%m, %c2, %uu, %s0, %ss)
)IR", {}},
    {"CatAndStack", R"IR(graph(%a : Double(2, 3), %b : Double(4, 3)):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %l : Tensor[] = prim::ListConstruct(%a, %b)
  %c : Tensor = aten::cat(%l, %zero)
  %ta : Tensor = aten::tanh(%a)
  %l2 : Tensor[] = prim::ListConstruct(%a, %ta)
  %s : Tensor = aten::stack(%l2, %one)
  return (%c, %s)
)IR", {}},
    {"Reductions", R"IR(graph(%x : Double(3, 4)):
  %d0 : int[] = prim::Constant[value=[0]]()
  %d1 : int[] = prim::Constant[value=[-1]]()
  %f : bool = prim::Constant[value=0]()
  %t : bool = prim::Constant[value=1]()
  %a : Tensor = aten::sum(%x)
  %b : Tensor = aten::sum(%x, %d0, %f)
  %c : Tensor = aten::mean(%x)
  %d : Tensor = aten::mean(%x, %d1, %t)
  %sizes : int[] = prim::Constant[value=[1, 4]]()
  %e : Tensor = aten::sum_to_size(%x, %sizes)
  return (%a, %b, %c, %d, %e)
)IR", {}},
    {"SoftmaxFamilyAndLosses", R"IR(graph(%x : Double(4, 5), %t : Long(4)):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %s : Tensor = aten::softmax(%x, %one)
  %ls0 : Tensor = aten::log_softmax(%x, %zero)
  %ls : Tensor = aten::log_softmax(%x, %one)
  %n : Tensor = aten::nll_loss(%ls, %t)
  %ce : Tensor = aten::cross_entropy(%x, %t)
  return (%s, %ls0, %n, %ce)
)IR", {{"t", {4, 0, 2, 4}}}},
    {"VarianceAndStd", R"IR(graph(%x : Double(3, 4)):
  %d1 : int[] = prim::Constant[value=[1]]()
  %dl : int[] = prim::Constant[value=[-1]]()
  %all : int[] = prim::Constant[value=[]]()
  %f : bool = prim::Constant[value=0]()
  %t : bool = prim::Constant[value=1]()
  %a : Tensor = aten::var(%x, %d1, %t, %f)
  %b : Tensor = aten::var(%x, %dl, %f, %t)
  %c : Tensor = aten::std(%x, %all, %f, %f)
  %d : Tensor = aten::std(%x, %d1, %t, %t)
  return (%a, %b, %c, %d)
)IR", {}},
    {"LayerNorm", R"IR(graph(%x : Double(3, 5), %w : Double(5), %b : Double(5), %y : Double(2, 2, 3)):
  %s1 : int[] = prim::Constant[value=[5]]()
  %s2 : int[] = prim::Constant[value=[2, 3]]()
  %eps : float = prim::Constant[value=1.0000000000000001e-05]()
  %none : NoneType = prim::Constant()
  %t : bool = prim::Constant[value=1]()
  %a : Tensor = aten::layer_norm(%x, %s1, %w, %b, %eps, %t)
  %c : Tensor = aten::layer_norm(%y, %s2, %none, %none, %eps, %t)
  %o : Tensor, %mean : Tensor, %rstd : Tensor = aten::native_layer_norm(%x, %s1, %none, %b, %eps)
  return (%a, %c, %o)
)IR", {}},
    // Linear in x for a fixed generator state: its gradient is the same mask, drawn again.
    {"PhiloxDropout", R"IR(graph(%x : Double(6, 5), %rng : Long(2)):
  %p : float = prim::Constant[value=0.5]()
  %t : bool = prim::Constant[value=1]()
  %f : bool = prim::Constant[value=0]()
  %s : int = prim::Constant[value=1]()
  %y : Tensor = prim::philox_dropout(%x, %p, %t, %rng, %s)
  %e : Tensor = prim::philox_dropout(%x, %p, %f, %rng, %s)
  %z : Tensor = aten::mul(%y, %x)
  return (%z, %e)
)IR", {{"rng", {20261123, 4}}}},
    // Repeated indices: their slices' gradients add up.
    {"IndexSelect", R"IR(graph(%x : Double(3, 3, 2), %idx : Long(4)):
  %one : int = prim::Constant[value=1]()
  %y : Tensor = aten::index_select(%x, %one, %idx)
  %z : Tensor = aten::mul(%y, %y)
  return (%z)
)IR", {{"idx", {2, 0, 2, 1}}}},
    // A batch sorted by length and packed; a slice whose end the batch sizes give (known only at run time).
    {"PackPaddedSequence", R"IR(graph(%x : Double(4, 3, 2), %len : Long(3)):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %t : bool = prim::Constant[value=1]()
  %f : bool = prim::Constant[value=0]()
  %sl : Tensor, %order : Tensor = aten::sort(%len, %zero, %t)
  %xs : Tensor = aten::index_select(%x, %one, %order)
  %data : Tensor, %bs : Tensor = aten::_pack_padded_sequence(%xs, %sl, %f)
  %b1 : Tensor = aten::select(%bs, %zero, %one)
  %n : int = aten::Int(%b1)
  %m : int = aten::sub(%n, %one)
  %part : Tensor = aten::slice(%data, %zero, %m, %n, %one)
  %y : Tensor = aten::mul(%part, %part)
  return (%data, %y)
)IR", {{"len", {2, 4, 3}}}},
    // Training (the batch's statistics, as batch_norm and as the functional form whose running statistics
    // carry no gradient), and eval (the running ones), each with an affine map; and none.
    {"BatchNorm", R"IR(graph(%x : Double(3, 2, 2, 3), %w : Double(2), %b : Double(2), %rm : Double(2), %rv : Double(2)):
  %t : bool = prim::Constant[value=1]()
  %f : bool = prim::Constant[value=0]()
  %m : float = prim::Constant[value=0.1]()
  %eps : float = prim::Constant[value=1e-05]()
  %none : NoneType = prim::Constant()
  %y : Tensor = aten::batch_norm(%x, %w, %b, %rm, %rv, %t, %m, %eps, %t)
  %y2 : Tensor, %mean : Tensor, %invstd : Tensor, %rm2 : Tensor, %rv2 : Tensor = aten::_native_batch_norm_legit_functional(%y, %w, %none, %rm, %rv, %t, %m, %eps)
  %e : Tensor = aten::batch_norm(%y2, %w, %b, %rm, %rv, %f, %m, %eps, %t)
  %z : Tensor = aten::mul(%e, %x)
  %u : Tensor = aten::batch_norm(%z, %none, %none, %none, %none, %t, %m, %eps, %t)
  return (%u)
)IR", {}, {"rm", "rv"}},
    // Windows that overlap (stride 2 under a 3-wide kernel), padding, and adaptive windows of unequal sizes
    // (5 rows into 2 cells, 5 columns into 3); flatten's gradient is its reshape back.
    {"Pooling", R"IR(graph(%x : Double(2, 2, 5, 5)):
  %k : int[] = prim::Constant[value=[3, 3]]()
  %s : int[] = prim::Constant[value=[2, 2]]()
  %p : int[] = prim::Constant[value=[1, 1]]()
  %d : int[] = prim::Constant[value=[1, 1]]()
  %f : bool = prim::Constant[value=0]()
  %o : int[] = prim::Constant[value=[2, 3]]()
  %one : int = prim::Constant[value=1]()
  %last : int = prim::Constant[value=-1]()
  %sq : Tensor = aten::mul(%x, %x)
  %m : Tensor = aten::max_pool2d(%sq, %k, %s, %p, %d, %f)
  %a : Tensor = aten::adaptive_avg_pool2d(%x, %o)
  %y : Tensor = aten::flatten(%a, %one, %last)
  %z : Tensor = aten::mul(%y, %y)
  %mi : Tensor, %idx : Tensor = aten::max_pool2d_with_indices(%x, %k, %s, %p, %d, %f)
  return (%m, %z, %mi)
)IR", {}},
    {"Embedding", R"IR(graph(%w : Double(5, 3), %idx : Long(2, 3)):
  %e : Tensor = aten::embedding(%w, %idx)
  return (%e)
)IR", {{"idx", {4, 0, 4, 1, 2, 4}}}},
    {"Conv2dStridePaddingDilation", R"IR(graph(%x : Double(2, 2, 6, 5), %w : Double(3, 2, 3, 2), %b : Double(3)):
  %stride : int[] = prim::Constant[value=[2, 1]]()
  %pad : int[] = prim::Constant[value=[1, 0]]()
  %dil : int[] = prim::Constant[value=[1, 2]]()
  %g : int = prim::Constant[value=1]()
  %y : Tensor = aten::conv2d(%x, %w, %b, %stride, %pad, %dil, %g)
  return (%y)
)IR", {}},
    {"Conv2dGroups", R"IR(graph(%x : Double(1, 4, 4, 4), %w : Double(2, 2, 3, 3)):
  %one : int[] = prim::Constant[value=[1, 1]]()
  %none : NoneType = prim::Constant()
  %g : int = prim::Constant[value=2]()
  %y : Tensor = aten::conv2d(%x, %w, %none, %one, %one, %one, %g)
  return (%y)
)IR", {}},
};

// sum_k sum(out_k * w_k)
double weightedLoss(const std::vector<IValue>& outs, const std::vector<Tensor>& w) {
  double s = 0;
  for (size_t k = 0; k < outs.size(); ++k) s += ops::sum(ops::mul(outs[k].toTensor(), w[k])).item();
  return s;
}

class FiniteDifferences : public testing::TestWithParam<GradCase> {};

TEST_P(FiniteDifferences, AnalyticGradientsMatch) {
  const GradCase& c = GetParam();
  auto g = std::shared_ptr<Graph>(parseIR(c.ir, std::string(c.name) + ".ir"));
  std::vector<IValue> inputs;
  std::vector<bool> rg;
  uint64_t seed = 11;
  for (const Value* in : g->inputs()) {
    auto fixed = std::find_if(c.longs.begin(), c.longs.end(), [&](const auto& p) { return p.first == in->name(); });
    if (fixed != c.longs.end()) {
      inputs.push_back(Tensor::fromVector(*in->type().sizes, fixed->second, DType::Int64));
      rg.push_back(false);
    } else if (c.constants.count(in->name())) {
      inputs.push_back(Tensor::rand(*in->type().sizes, DType::Float64, seed++, 0.2, 1.2));
      rg.push_back(false);
    } else {
      inputs.push_back(Tensor::rand(*in->type().sizes, DType::Float64, seed++, 0.2, 1.2));
      rg.push_back(true);
    }
  }
  auto plain = Interpreter(*g).run(inputs);
  std::vector<Tensor> weights;
  for (const IValue& o : plain) weights.push_back(Tensor::rand(o.toTensor().sizes(), DType::Float64, seed++, -1, 1));

  AutodiffGraph ag = prepareAutodiff(g, rg);
  Tape tape(inputs.size());
  auto outs = Interpreter(*ag.graph, &ag.gradients).runWithTape(inputs, rg, tape);
  auto grads = tape.backward(outs, weights);

  const double eps = 1e-6;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!rg[i]) continue;
    const Tensor& x = inputs[i].toTensor();
    ASSERT_TRUE(grads[i].defined()) << "no gradient for input " << i;
    ASSERT_EQ(grads[i].sizes(), x.sizes());
    for (int64_t j = 0; j < x.numel(); ++j) {
      double orig = x.data<double>()[j];
      x.data<double>()[j] = orig + eps;
      double up = weightedLoss(Interpreter(*g).run(inputs), weights);
      x.data<double>()[j] = orig - eps;
      double down = weightedLoss(Interpreter(*g).run(inputs), weights);
      x.data<double>()[j] = orig;
      double fd = (up - down) / (2 * eps);
      EXPECT_NEAR(grads[i].item(j), fd, 1e-6 * std::max(1.0, std::abs(fd)))
          << c.name << ": d/d" << g->inputs()[i]->name() << "[" << j << "]";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Formulas, FiniteDifferences, testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(FiniteDifferences, EveryFormulaInTheTableIsChecked) {
  std::set<OpKind> covered;
  for (const GradCase& c : kCases) {
    auto g = parseIR(c.ir);
    forEachNode(g->block(), [&](Node* n) { covered.insert(n->kind()); });
  }
  for (const OpInfo& op : allOps())
    if (hasGradientFormula(op.kind)) {
      EXPECT_TRUE(covered.count(op.kind)) << op.name << " has no finite-difference case";
    }
}

}  // namespace
}  // namespace gj
