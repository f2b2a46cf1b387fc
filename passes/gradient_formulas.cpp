// The table of gradient formulas: one case per differentiable op. Each formula reads the gradients of
// the node's outputs and adds the gradients of its inputs (ctx.accumulate ignores inputs that do not
// require grad). `F(v)` is forward value v in the backward graph (saved or a copied constant).
#include "passes/autodiff.h"
#include "passes/gradient_context.h"
#include "passes/util.h"

namespace gj {

namespace {

Type listType() { return Type::of(TypeKind::TensorList); }

// aten::matmul's gradients: [..., K] x [K, N] (a GEMM on the rows), or batched.
void matmulGrad(GradientContext& c, Node* n, Value* gy) {
  GraphBuilder& b = c.b();
  Value* a = n->input(0);
  Value* w = n->input(1);
  auto ra = a->type().sizes ? std::optional<size_t>(a->type().sizes->size()) : std::nullopt;
  auto rw = w->type().sizes ? std::optional<size_t>(w->type().sizes->size()) : std::nullopt;
  if ((!ra || *ra >= 2) && (!rw || *rw >= 3)) {
    // batched, [..., M, K] x [..., K, N], the batch dims broadcast: each operand's gradient is the product
    // with the other transposed, summed back over the dims it was broadcast along (a rank-1 operand of a
    // rank unknown here fails at run time, in the transpose)
    auto transposed = [&](Value* x) { return b.op(OpKind::Transpose, {x, b.i(-2), b.i(-1)}); };
    auto sa = staticSizes(a), sw = staticSizes(w);
    const bool sameBatch = sa && sw && sa->size() == sw->size() && std::equal(sa->begin(), sa->end() - 2, sw->begin());
    auto back = [&](Value* g, Value* x) { return sameBatch ? g : c.reduceTo(g, x, n->output()); };
    if (GradientContext::requiresGrad(a)) c.accumulate(a, back(b.op(OpKind::Matmul, {gy, transposed(c.F(w))}), a));
    if (GradientContext::requiresGrad(w)) c.accumulate(w, back(b.op(OpKind::Matmul, {transposed(c.F(a)), gy}), w));
    return;
  }
  USER_CHECK(rw && *rw == 2 && (!ra || *ra >= 1),
             "autodiff: the aten::matmul gradient handles [..., K] x [K, N] and batched [..., M, K] x [..., K, N]; {} "
             "has {} x {}",
             n->describe(), a->type().str(), w->type().str());
  if (GradientContext::requiresGrad(a)) c.accumulate(a, b.op(OpKind::Matmul, {gy, b.op(OpKind::T, {c.F(w)})}));
  if (!GradientContext::requiresGrad(w)) return;
  Value* k = b.op(OpKind::Size, {c.F(w), b.i(0)}, Type::of(TypeKind::Int));
  Value* nOut = b.op(OpKind::Size, {c.F(w), b.i(1)}, Type::of(TypeKind::Int));
  if (auto sw = staticSizes(w)) {
    k = b.i((*sw)[0]);
    nOut = b.i((*sw)[1]);
  }
  Value* a2 = b.op(OpKind::Reshape, {c.F(a), b.list({b.i(-1), k}, TypeKind::IntList)});
  Value* g2 = b.op(OpKind::Reshape, {gy, b.list({b.i(-1), nOut}, TypeKind::IntList)});
  c.accumulate(w, b.op(OpKind::Mm, {b.op(OpKind::T, {a2}), g2}));
}

Value* scaled(GraphBuilder& b, Value* g, Value* factor) {
  if (isConstantEqual(factor, 1.0)) return g;
  return b.op(OpKind::Mul, {g, factor});
}

// pow(x, e)'s gradient of x, e a tensor or a scalar: g e x^(e - 1), and zero where the exponent is 0
// (where x^-1 would give 0 * inf at x = 0), as PyTorch's.
Value* powGrad(GradientContext& c, Node* n, Value* gy) {
  GraphBuilder& b = c.b();
  Value* x = c.F(n->input(0));
  Value* e = n->input(1);
  const bool number = !e->type().isTensor();
  if (auto k = number ? constantDouble(e) : std::nullopt) {
    if (*k == 0.0) return b.op(OpKind::ZerosLike, {x});
    return b.op(OpKind::Mul, {gy, b.op(OpKind::Mul, {b.op(OpKind::Pow, {x, b.f(*k - 1.0)}), b.f(*k)})});
  }
  // e a tensor, or a number known only at run time (a float input of the graph), whose e - 1 is computed on
  // the host and whose mask comes from a tensor filled with it
  Value* ef = c.F(e);
  Value* lower = number ? b.op(OpKind::ScalarSub, {ef, b.f(1.0)}, Type::of(TypeKind::Float))
                        : b.op(OpKind::Sub, {ef, b.f(1.0), b.i(1)});
  Value* exponents = number ? b.op(OpKind::Add, {b.op(OpKind::ZerosLike, {x}), ef, b.i(1)}) : ef;
  Value* g = b.op(OpKind::Mul, {gy, b.op(OpKind::Mul, {b.op(OpKind::Pow, {x, lower}), ef})});
  return b.op(OpKind::MaskedFill, {g, b.op(OpKind::Eq, {exponents, b.f(0.0)}), b.f(0.0)});
}

// pow(x, e)'s gradient of a tensor exponent: g x^e log x, and zero where x is 0 and e is not negative (where
// log x would give 0 * -inf), as PyTorch's.
Value* powExponentGrad(GradientContext& c, Node* n, Value* gy) {
  GraphBuilder& b = c.b();
  Value* x = c.F(n->input(0));
  Value* g = b.op(OpKind::Mul, {gy, b.op(OpKind::Mul, {c.F(n->output()), b.op(OpKind::Log, {x})})});
  Value* atZero = b.op(OpKind::Where, {b.op(OpKind::Ge, {c.F(n->input(1)), b.f(0.0)}), b.f(0.0), g});
  return b.op(OpKind::Where, {b.op(OpKind::Eq, {x, b.f(0.0)}), atZero, g});
}

}  // namespace

bool hasGradientFormula(OpKind k) { return opInfo(k).differentiable(); }

void emitGradient(GradientContext& c, Node* n) {
  GraphBuilder& b = c.b();
  auto in = [&](size_t i) { return n->input(i); };
  auto F = [&](Value* v) { return c.F(v); };
  Value* out = n->outputs().empty() ? nullptr : n->output(0);
  Value* gy = out && (out->type().isTensor() || c.hasGrad(out)) ? c.gradOf(out) : nullptr;
  auto acc = [&](Value* v, Value* g) { c.accumulate(v, g); };
  auto needs = [&](size_t i) { return GradientContext::requiresGrad(in(i)); };
  switch (n->kind()) {
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::AutogradAdd: {
      if (needs(0)) acc(in(0), c.reduceTo(gy, in(0), out));
      if (n->inputs().size() > 1 && needs(1)) {
        Value* g = n->kind() == OpKind::AutogradAdd ? gy : scaled(b, gy, F(in(2)));
        if (n->kind() == OpKind::Sub) g = b.op(OpKind::Neg, {g});
        acc(in(1), c.reduceTo(g, in(1), out));
      }
      return;
    }
    case OpKind::Mul:
      if (needs(0)) acc(in(0), c.reduceTo(b.op(OpKind::Mul, {gy, F(in(1))}), in(0), out));
      if (needs(1)) acc(in(1), c.reduceTo(b.op(OpKind::Mul, {gy, F(in(0))}), in(1), out));
      return;
    case OpKind::Div:
      if (needs(0)) acc(in(0), c.reduceTo(b.op(OpKind::Div, {gy, F(in(1))}), in(0), out));
      if (needs(1)) {
        Value* g = b.op(OpKind::Neg, {b.op(OpKind::Div, {b.op(OpKind::Mul, {gy, F(out)}), F(in(1))})});
        acc(in(1), c.reduceTo(g, in(1), out));
      }
      return;
    case OpKind::Neg: acc(in(0), b.op(OpKind::Neg, {gy})); return;
    case OpKind::Sigmoid: acc(in(0), b.op(OpKind::SigmoidBackward, {gy, F(out)})); return;
    case OpKind::Tanh: acc(in(0), b.op(OpKind::TanhBackward, {gy, F(out)})); return;
    case OpKind::Relu: acc(in(0), b.op(OpKind::ThresholdBackward, {gy, F(out), b.f(0.0)})); return;
    case OpKind::Exp: acc(in(0), b.op(OpKind::Mul, {gy, F(out)})); return;
    case OpKind::Log: acc(in(0), b.op(OpKind::Div, {gy, F(in(0))})); return;
    case OpKind::Sqrt: acc(in(0), b.op(OpKind::Div, {gy, b.op(OpKind::Mul, {F(out), b.f(2.0)})})); return;
    case OpKind::Rsqrt: {  // y = x^-1/2: dy/dx = -y^3 / 2
      Value* y = F(out);
      acc(in(0), b.op(OpKind::Mul, {gy, b.op(OpKind::Mul, {b.op(OpKind::Mul, {y, y}), b.op(OpKind::Mul, {y, b.f(-0.5)})})}));
      return;
    }
    case OpKind::Rsub:  // other - alpha * self
      if (needs(0)) acc(in(0), c.reduceTo(b.op(OpKind::Neg, {scaled(b, gy, F(in(2)))}), in(0), out));
      if (in(1)->type().isTensor() && needs(1)) acc(in(1), c.reduceTo(gy, in(1), out));
      return;
    case OpKind::Pow:
      if (needs(0)) acc(in(0), c.reduceTo(powGrad(c, n, gy), in(0), out));
      if (in(1)->type().isTensor() && needs(1)) acc(in(1), c.reduceTo(powExponentGrad(c, n, gy), in(1), out));
      return;
    case OpKind::Abs: acc(in(0), b.op(OpKind::Mul, {gy, b.op(OpKind::Sign, {F(in(0))})})); return;
    case OpKind::Sign: case OpKind::Floor: case OpKind::Ceil: case OpKind::Trunc: case OpKind::Round:
      acc(in(0), b.op(OpKind::ZerosLike, {gy}));
      return;
    case OpKind::Frac: acc(in(0), gy); return;
    case OpKind::Reciprocal: {  // -g y^2
      Value* y = F(out);
      acc(in(0), b.op(OpKind::Neg, {b.op(OpKind::Mul, {gy, b.op(OpKind::Mul, {y, y})})}));
      return;
    }
    case OpKind::ClampMin: acc(in(0), b.op(OpKind::ClampMinBackward, {gy, F(in(0)), F(in(1))})); return;
    case OpKind::ClampMax: acc(in(0), b.op(OpKind::ClampMaxBackward, {gy, F(in(0)), F(in(1))})); return;
    case OpKind::Clamp: {  // a None bound passes everything
      Value* g = gy;
      if (in(1)->type().kind != TypeKind::None) g = b.op(OpKind::ClampMinBackward, {g, F(in(0)), F(in(1))});
      if (in(2)->type().kind != TypeKind::None) g = b.op(OpKind::ClampMaxBackward, {g, F(in(0)), F(in(2))});
      acc(in(0), g);
      return;
    }
    case OpKind::Hardtanh:  // only strictly between the bounds
      acc(in(0), b.op(OpKind::BelowBackward,
                      {b.op(OpKind::ThresholdBackward, {gy, F(in(0)), F(in(1))}), F(in(0)), F(in(2))}));
      return;
    case OpKind::Maximum: case OpKind::Minimum: {  // the larger (smaller) operand takes it, each half on a tie
      // minimum's self takes it where maximum's other would: where self < other
      const bool max = n->kind() == OpKind::Maximum;
      Value *x = F(in(0)), *y = F(in(1));
      if (needs(0)) acc(in(0), c.reduceTo(b.op(OpKind::MaximumBackward, {gy, max ? x : y, max ? y : x}), in(0), out));
      if (needs(1)) acc(in(1), c.reduceTo(b.op(OpKind::MaximumBackward, {gy, max ? y : x, max ? x : y}), in(1), out));
      return;
    }
    case OpKind::Erf: {  // 2 / sqrt(pi) exp(-x^2)
      Value* x = F(in(0));
      Value* e = b.op(OpKind::Exp, {b.op(OpKind::Neg, {b.op(OpKind::Mul, {x, x})})});
      acc(in(0), b.op(OpKind::Mul, {gy, b.op(OpKind::Mul, {e, b.f(1.1283791670955126)})}));
      return;
    }
    case OpKind::Sin: acc(in(0), b.op(OpKind::Mul, {gy, b.op(OpKind::Cos, {F(in(0))})})); return;
    case OpKind::Cos: acc(in(0), b.op(OpKind::Neg, {b.op(OpKind::Mul, {gy, b.op(OpKind::Sin, {F(in(0))})})})); return;
    case OpKind::Expm1:  // exp(x) = y + 1
      acc(in(0), b.op(OpKind::Mul, {gy, b.op(OpKind::Add, {F(out), b.f(1.0), b.i(1)})}));
      return;
    case OpKind::Log1p: acc(in(0), b.op(OpKind::Div, {gy, b.op(OpKind::Add, {F(in(0)), b.f(1.0), b.i(1)})})); return;
    case OpKind::Atan: {  // 1 / (1 + x^2)
      Value* x = F(in(0));
      acc(in(0), b.op(OpKind::Div, {gy, b.op(OpKind::Add, {b.op(OpKind::Mul, {x, x}), b.f(1.0), b.i(1)})}));
      return;
    }
    case OpKind::Asin: case OpKind::Acos: {  // +-1 / sqrt(1 - x^2)
      Value* x = F(in(0));
      Value* g = b.op(OpKind::Mul, {gy, b.op(OpKind::Rsqrt, {b.op(OpKind::Rsub, {b.op(OpKind::Mul, {x, x}), b.f(1.0), b.i(1)})})});
      acc(in(0), n->kind() == OpKind::Asin ? g : b.op(OpKind::Neg, {g}));
      return;
    }
    case OpKind::Sinh: acc(in(0), b.op(OpKind::Mul, {gy, b.op(OpKind::Cosh, {F(in(0))})})); return;
    case OpKind::Cosh: acc(in(0), b.op(OpKind::Mul, {gy, b.op(OpKind::Sinh, {F(in(0))})})); return;
    case OpKind::Atan2: {  // (x, -y) / (x^2 + y^2) for atan2(y, x)
      Value *y = F(in(0)), *x = F(in(1));
      Value* r = b.op(OpKind::Reciprocal, {b.op(OpKind::Add, {b.op(OpKind::Mul, {y, y}), b.op(OpKind::Mul, {x, x}), b.i(1)})});
      if (needs(0)) acc(in(0), c.reduceTo(b.op(OpKind::Mul, {b.op(OpKind::Mul, {gy, x}), r}), in(0), out));
      if (needs(1)) acc(in(1), c.reduceTo(b.op(OpKind::Mul, {b.op(OpKind::Mul, {gy, b.op(OpKind::Neg, {y})}), r}), in(1), out));
      return;
    }
    case OpKind::Fmod: case OpKind::TensorRemainder: {  // self: 1; other: -trunc(self / other) (floor for remainder)
      if (needs(0)) acc(in(0), c.reduceTo(gy, in(0), out));
      if (needs(1)) {
        Value* q = b.op(n->kind() == OpKind::Fmod ? OpKind::Trunc : OpKind::Floor, {b.op(OpKind::Div, {F(in(0)), F(in(1))})});
        acc(in(1), c.reduceTo(b.op(OpKind::Neg, {b.op(OpKind::Mul, {gy, q})}), in(1), out));
      }
      return;
    }
    case OpKind::DivFloor: case OpKind::DivTrunc:  // piecewise constant: zeros, as PyTorch's div with a rounding mode
      if (needs(0)) acc(in(0), b.op(OpKind::ZerosLike, {F(in(0))}));
      if (needs(1)) acc(in(1), b.op(OpKind::ZerosLike, {F(in(1))}));
      return;
    case OpKind::Softplus: {  // x beta > threshold ? 1 : sigmoid(x beta), as PyTorch's mask
      Value* xb = b.op(OpKind::Mul, {F(in(0)), F(in(1))});
      acc(in(0), b.op(OpKind::Where, {b.op(OpKind::Gt, {xb, F(in(2))}), gy,
                                      b.op(OpKind::Mul, {gy, b.op(OpKind::Sigmoid, {xb})})}));
      return;
    }
    case OpKind::Elu: {  // x <= 0 ? scale alpha exp(x) : scale (NaN: scale), as PyTorch's mask
      Value* x = F(in(0));
      Value* scaled = b.op(OpKind::Mul, {gy, F(in(2))});
      acc(in(0), b.op(OpKind::Where, {b.op(OpKind::Le, {x, b.f(0.0)}),
                                      b.op(OpKind::Mul, {b.op(OpKind::Mul, {scaled, F(in(1))}), b.op(OpKind::Exp, {x})}),
                                      scaled}));
      return;
    }
    case OpKind::Lgamma: acc(in(0), b.op(OpKind::Mul, {gy, b.op(OpKind::Digamma, {F(in(0))})})); return;
    case OpKind::Erfc: {  // -2 / sqrt(pi) exp(-x^2)
      Value* x = F(in(0));
      Value* e = b.op(OpKind::Exp, {b.op(OpKind::Neg, {b.op(OpKind::Mul, {x, x})})});
      acc(in(0), b.op(OpKind::Mul, {gy, b.op(OpKind::Mul, {e, b.f(-1.1283791670955126)})}));
      return;
    }
    case OpKind::Gelu: acc(in(0), b.op(OpKind::GeluBackward, {gy, F(in(0))})); return;
    case OpKind::Silu: acc(in(0), b.op(OpKind::SiluBackward, {gy, F(in(0))})); return;
    case OpKind::Hardswish: acc(in(0), b.op(OpKind::HardswishBackward, {gy, F(in(0))})); return;
    case OpKind::LeakyRelu: acc(in(0), b.op(OpKind::LeakyReluBackward, {gy, F(in(0)), F(in(1))})); return;
    case OpKind::Where:  // the condition (bool) takes none
      if (needs(1)) acc(in(1), c.reduceTo(b.op(OpKind::Where, {F(in(0)), gy, b.f(0.0)}), in(1), out));
      if (needs(2)) acc(in(2), c.reduceTo(b.op(OpKind::Where, {F(in(0)), b.f(0.0), gy}), in(2), out));
      return;
    case OpKind::MaskedFill:
      acc(in(0), c.reduceTo(b.op(OpKind::MaskedFill, {gy, F(in(1)), b.f(0.0)}), in(0), out));
      return;
    case OpKind::Mm:
      if (needs(0)) acc(in(0), b.op(OpKind::Mm, {gy, b.op(OpKind::T, {F(in(1))})}));
      if (needs(1)) acc(in(1), b.op(OpKind::Mm, {b.op(OpKind::T, {F(in(0))}), gy}));
      return;
    case OpKind::Bmm: {
      Value* one = b.i(1);
      Value* two = b.i(2);
      if (needs(0)) acc(in(0), b.op(OpKind::Bmm, {gy, b.op(OpKind::Transpose, {F(in(1)), one, two})}));
      if (needs(1)) acc(in(1), b.op(OpKind::Bmm, {b.op(OpKind::Transpose, {F(in(0)), one, two}), gy}));
      return;
    }
    case OpKind::Matmul: return matmulGrad(c, n, gy);
    case OpKind::Addmm:
      if (needs(0)) acc(in(0), c.reduceTo(scaled(b, gy, F(in(3))), in(0), out));
      if (needs(1)) acc(in(1), scaled(b, b.op(OpKind::Mm, {gy, b.op(OpKind::T, {F(in(2))})}), F(in(4))));
      if (needs(2)) acc(in(2), scaled(b, b.op(OpKind::Mm, {b.op(OpKind::T, {F(in(1))}), gy}), F(in(4))));
      return;
    case OpKind::Linear: {
      if (needs(0)) acc(in(0), b.op(OpKind::Matmul, {gy, F(in(1))}));
      if (needs(1)) {
        Value* outF = b.op(OpKind::Size, {F(in(1)), b.i(0)}, Type::of(TypeKind::Int));
        Value* inF = b.op(OpKind::Size, {F(in(1)), b.i(1)}, Type::of(TypeKind::Int));
        if (auto sw = staticSizes(in(1))) outF = b.i((*sw)[0]), inF = b.i((*sw)[1]);
        Value* g2 = b.op(OpKind::Reshape, {gy, b.list({b.i(-1), outF}, TypeKind::IntList)});
        Value* x2 = b.op(OpKind::Reshape, {F(in(0)), b.list({b.i(-1), inF}, TypeKind::IntList)});
        acc(in(1), b.op(OpKind::Mm, {b.op(OpKind::T, {g2}), x2}));
      }
      if (in(2)->type().isTensor() && needs(2)) acc(in(2), b.op(OpKind::SumToSize, {gy, c.sizesOf(in(2))}));
      return;
    }
    case OpKind::T: acc(in(0), b.op(OpKind::T, {gy})); return;
    case OpKind::Transpose: acc(in(0), b.op(OpKind::Transpose, {gy, F(in(1)), F(in(2))})); return;
    case OpKind::Permute: {
      auto dims = constantInts(in(1));
      USER_CHECK(dims.has_value(), "autodiff: {} needs constant dims", n->describe());
      std::vector<int64_t> inverse(dims->size());
      for (size_t i = 0; i < dims->size(); ++i) {
        int64_t d = (*dims)[i] < 0 ? (*dims)[i] + static_cast<int64_t>(dims->size()) : (*dims)[i];
        inverse[d] = static_cast<int64_t>(i);
      }
      acc(in(0), b.op(OpKind::Permute, {gy, b.ints(inverse)}));
      return;
    }
    case OpKind::Select: c.accumulateSelect(in(0), gy, in(1), in(2)); return;
    case OpKind::Slice:
      acc(in(0), b.op(OpKind::SliceBackward, {gy, c.sizesOf(in(0)), F(in(1)), F(in(2)), F(in(3)), F(in(4))}));
      return;
    case OpKind::View: case OpKind::Reshape: case OpKind::Squeeze:
      acc(in(0), b.op(OpKind::Reshape, {gy, c.sizesOf(in(0))}));
      return;
    case OpKind::Unsqueeze: acc(in(0), b.op(OpKind::Squeeze, {gy, F(in(1))})); return;
    case OpKind::Expand: case OpKind::SumToSize: {
      Value* g = n->kind() == OpKind::Expand ? b.op(OpKind::SumToSize, {gy, c.sizesOf(in(0))})
                                              : b.op(OpKind::Expand, {gy, c.sizesOf(in(0))});
      acc(in(0), g);
      return;
    }
    case OpKind::Contiguous: acc(in(0), gy); return;
    case OpKind::TypeAs: case OpKind::ToDType: case OpKind::CastOnDevice: acc(in(0), c.castTo(gy, in(0))); return;
    case OpKind::Chunk: case OpKind::SplitWithSizes:
      acc(in(0), b.op(OpKind::Cat, {c.gradOf(out), F(in(2))}));
      return;
    case OpKind::Unbind: acc(in(0), b.op(OpKind::Stack, {c.gradOf(out), F(in(1))})); return;
    case OpKind::Stack: acc(in(0), b.op(OpKind::Unbind, {gy, F(in(1))}, listType())); return;
    case OpKind::Cat: {
      Node* list = in(0)->node();
      USER_CHECK(list->kind() == OpKind::ListConstruct,
                 "autodiff: {} concatenates a list built elsewhere; its gradient needs the list's elements",
                 n->describe());
      std::vector<Value*> sizes;
      for (Value* e : list->inputs())
        sizes.push_back(b.op(OpKind::Size, {F(e), F(in(1))}, Type::of(TypeKind::Int)));
      acc(in(0), b.op(OpKind::SplitWithSizes, {gy, b.list(sizes, TypeKind::IntList), F(in(1))}, listType()));
      return;
    }
    case OpKind::ListConstruct: {
      if (out->type().kind != TypeKind::TensorList) return;
      auto parts = b.unpack(c.gradOf(out), n->inputs().size());
      for (size_t i = 0; i < parts.size(); ++i) acc(in(i), parts[i]);
      return;
    }
    case OpKind::ListUnpack: {
      std::vector<Value*> parts;
      for (Value* o : n->outputs()) parts.push_back(c.gradOf(o));
      acc(in(0), b.list(parts));
      return;
    }
    case OpKind::IndexSelect:
      acc(in(0), b.op(OpKind::IndexSelectBackward, {gy, c.sizesOf(in(0)), F(in(1)), F(in(2))}));
      return;
    case OpKind::PackPaddedSequence:  // batch_sizes (int64) carries no gradient; the data's goes back to its rows
      acc(in(0), b.op(OpKind::PackPaddedSequenceBackward, {gy, c.sizesOf(in(0)), F(n->output(1)), F(in(2))}));
      return;
    case OpKind::Sum: case OpKind::Mean:
      acc(in(0), b.op(n->kind() == OpKind::Sum ? OpKind::SumBackward : OpKind::MeanBackward,
                      {gy, c.sizesOf(in(0)), b.ints({}), b.b(false)}));
      return;
    case OpKind::SumDim: case OpKind::MeanDim:
      acc(in(0), b.op(n->kind() == OpKind::SumDim ? OpKind::SumBackward : OpKind::MeanBackward,
                      {gy, c.sizesOf(in(0)), F(in(1)), F(in(2))}));
      return;
    case OpKind::Amax: case OpKind::Amin: {
      // as PyTorch's: the gradient shared evenly among the elements equal to the extremum
      Value* sizes = c.sizesOf(in(0));
      auto spread = [&](Value* v) { return b.op(OpKind::SumBackward, {v, sizes, F(in(1)), F(in(2))}); };
      Value* ties = b.op(OpKind::EqualMask, {F(in(0)), spread(F(out))});
      Value* count = b.op(OpKind::SumDim, {ties, F(in(1)), b.b(true)});
      acc(in(0), b.op(OpKind::Div, {b.op(OpKind::Mul, {spread(gy), ties}), count}));
      return;
    }
    case OpKind::MaxDim: case OpKind::MinDim:  // all of it to the index picked (the first on a tie), as PyTorch's
      acc(in(0), b.op(OpKind::ValueSelectingBackward, {gy, F(in(1)), F(n->output(1)), c.sizesOf(in(0)), F(in(2))}));
      return;
    case OpKind::PhiloxDropout:  // linear in the input: the same draws (seed, offset, stream) mask the gradient
      acc(in(0), b.op(OpKind::PhiloxDropout, {gy, F(in(1)), F(in(2)), F(in(3)), F(in(4))}));
      return;
    case OpKind::Var: acc(in(0), b.op(OpKind::VarBackward, {gy, F(in(0)), F(in(1)), F(in(2)), F(in(3))})); return;
    case OpKind::Std: {  // d sqrt(v) = dv / (2 sqrt(v)); 0 where the deviation is 0, as PyTorch's
      Value* y = F(out);
      Value* g = b.op(OpKind::Div, {gy, b.op(OpKind::Mul, {y, b.f(2.0)})});
      g = b.op(OpKind::MaskedFill, {g, b.op(OpKind::Eq, {y, b.f(0.0)}), b.f(0.0)});
      acc(in(0), b.op(OpKind::VarBackward, {g, F(in(0)), F(in(1)), F(in(2)), F(in(3))}));
      return;
    }
    case OpKind::LayerNorm:
    case OpKind::NativeLayerNorm: {
      // differentiate() computes a layer_norm on the gradient path as native_layer_norm, whose statistics
      // the backward reads.
      IR_CHECK(n->kind() == OpKind::NativeLayerNorm) << "autodiff: " << n->describe() << " was not rewritten";
      USER_CHECK(!c.hasGrad(n->output(1)) && !c.hasGrad(n->output(2)),
                 "autodiff: {} uses the mean or rstd of a layer norm on the gradient path; only its output is "
                 "differentiated", n->describe());
      Value *mean = F(n->output(1)), *rstd = F(n->output(2));
      Node* g = b.node(OpKind::NativeLayerNormBackward, {gy, F(in(0)), F(in(1)), mean, rstd, F(in(2)), F(in(3))}, 3);
      acc(in(0), g->output(0));
      if (in(2)->type().isTensor()) acc(in(2), g->output(1));
      if (in(3)->type().isTensor()) acc(in(3), g->output(2));
      return;
    }
    case OpKind::BatchNorm:
    case OpKind::NativeBatchNorm: {
      // differentiate() computes a batch_norm on the gradient path as the functional native form, whose
      // statistics the backward reads. The updated running statistics carry no gradient.
      IR_CHECK(n->kind() == OpKind::NativeBatchNorm) << "autodiff: " << n->describe() << " was not rewritten";
      USER_CHECK(!c.hasGrad(n->output(1)) && !c.hasGrad(n->output(2)),
                 "autodiff: {} uses the mean or invstd of a batch norm on the gradient path; only its output is "
                 "differentiated", n->describe());
      Node* g = b.node(OpKind::NativeBatchNormBackward, {gy, F(in(0)), F(in(1)), F(in(3)), F(in(4)),
                                                         F(n->output(1)), F(n->output(2)), F(in(5)), F(in(7))}, 3);
      acc(in(0), g->output(0));
      if (in(1)->type().isTensor()) acc(in(1), g->output(1));
      if (in(2)->type().isTensor()) acc(in(2), g->output(2));
      return;
    }
    case OpKind::MaxPool2d:
    case OpKind::MaxPool2dWithIndices:
      IR_CHECK(n->kind() == OpKind::MaxPool2dWithIndices) << "autodiff: " << n->describe() << " was not rewritten";
      acc(in(0), b.op(OpKind::MaxPool2dWithIndicesBackward, {gy, F(in(0)), F(in(1)), F(in(2)), F(in(3)), F(in(4)),
                                                               F(in(5)), F(n->output(1))}));
      return;
    case OpKind::AdaptiveAvgPool2d: acc(in(0), b.op(OpKind::AdaptiveAvgPool2dBackward, {gy, F(in(0))})); return;
    case OpKind::Flatten: acc(in(0), b.op(OpKind::Reshape, {gy, c.sizesOf(in(0))})); return;
    case OpKind::Softmax: acc(in(0), b.op(OpKind::SoftmaxBackward, {gy, F(out), F(in(1))})); return;
    case OpKind::LogSoftmax: acc(in(0), b.op(OpKind::LogSoftmaxBackward, {gy, F(out), F(in(1))})); return;
    case OpKind::NllLoss: acc(in(0), b.op(OpKind::NllLossBackward, {gy, F(in(0)), F(in(1))})); return;
    case OpKind::CrossEntropy: {
      Value* ls = b.op(OpKind::LogSoftmax, {F(in(0)), b.i(1)});
      Value* g = b.op(OpKind::NllLossBackward, {gy, ls, F(in(1))});
      acc(in(0), b.op(OpKind::LogSoftmaxBackward, {g, ls, b.i(1)}));
      return;
    }
    case OpKind::Embedding: {
      Value* rows = b.op(OpKind::Size, {F(in(0)), b.i(0)}, Type::of(TypeKind::Int));
      if (auto s = staticSizes(in(0))) rows = b.i((*s)[0]);
      acc(in(0), b.op(OpKind::EmbeddingBackward, {gy, F(in(1)), rows}));
      return;
    }
    case OpKind::Conv2d: {
      Node* g = b.node(OpKind::ConvolutionBackward, {gy, F(in(0)), F(in(1)), F(in(3)), F(in(4)), F(in(5)), F(in(6))}, 3);
      acc(in(0), g->output(0));
      acc(in(1), g->output(1));
      if (in(2)->type().isTensor()) acc(in(2), g->output(2));
      return;
    }
    case OpKind::Param: case OpKind::Return: case OpKind::Constant: case OpKind::ListAppend:
    case OpKind::Profile: case OpKind::TypeCheck: case OpKind::FallbackGraph: case OpKind::FusionGroup:
    case OpKind::TensorExprGroup: case OpKind::RecurrenceGroup:
    case OpKind::DifferentiableGraph: case OpKind::Loop: case OpKind::If: case OpKind::GetItem: case OpKind::Len:
    case OpKind::Size: case OpKind::Sizes: case OpKind::DTypeOf: case OpKind::IntAdd: case OpKind::FloorDiv:
    case OpKind::Remainder: case OpKind::IntSub: case OpKind::IntOfTensor: case OpKind::NewZeros: case OpKind::Sort:
    case OpKind::BitwiseAnd: case OpKind::BitwiseOr: case OpKind::BitwiseXor: case OpKind::LeftShift:
    case OpKind::RightShift: case OpKind::BitwiseNot:
    case OpKind::ScalarAdd: case OpKind::ScalarSub: case OpKind::ScalarMul: case OpKind::ScalarDiv:
    case OpKind::ScalarPow: case OpKind::ScalarMin: case OpKind::ScalarMax:
    case OpKind::ScalarAnd: case OpKind::ScalarOr: case OpKind::ScalarXor: case OpKind::ScalarLShift:
    case OpKind::ScalarRShift:
    case OpKind::IntEq: case OpKind::IntNe: case OpKind::IntLt:
    case OpKind::IntLe: case OpKind::IntGt: case OpKind::IntGe: case OpKind::BoolNot: case OpKind::RaiseIf:
    case OpKind::ListConcat: case OpKind::Gt: case OpKind::Lt: case OpKind::Ge: case OpKind::Le: case OpKind::Eq:
    case OpKind::Ne:
    case OpKind::IndexSelectBackward: case OpKind::PackPaddedSequenceBackward: case OpKind::ValueSelectingBackward:
    case OpKind::ZerosLike: case OpKind::OnesLike: case OpKind::FullLike: case OpKind::Detach: case OpKind::SigmoidBackward:
    case OpKind::TanhBackward: case OpKind::ThresholdBackward: case OpKind::ClampMinBackward:
    case OpKind::ClampMaxBackward: case OpKind::BelowBackward: case OpKind::MaximumBackward: case OpKind::EqualMask:
    case OpKind::GeluBackward: case OpKind::SiluBackward: case OpKind::LeakyReluBackward: case OpKind::HardswishBackward:
    case OpKind::SelectBackward: case OpKind::SliceBackward:
    case OpKind::EmbeddingBackward: case OpKind::SoftmaxBackward: case OpKind::LogSoftmaxBackward:
    case OpKind::NllLossBackward: case OpKind::ConvolutionBackward: case OpKind::SumBackward:
    case OpKind::MeanBackward: case OpKind::NativeLayerNormBackward: case OpKind::VarBackward:
    case OpKind::NativeBatchNormBackward: case OpKind::MaxPool2dWithIndicesBackward:
    case OpKind::AdaptiveAvgPool2dBackward: case OpKind::Digamma: case OpKind::Full: case OpKind::PhiloxUniform:
#include "ir/frontend_cases.inc"
      break;
  }
  throw Error(fmt::format("autodiff: no gradient formula for {}", n->info().name), n->describe(),
              "the op is not in the formula table (passes/gradient_formulas.cpp); keep it off the gradient path "
              "or add a formula");
}

}  // namespace gj
