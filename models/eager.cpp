#include "models/eager.h"

#include "runtime/ops/ops.h"
#include "support/error.h"

namespace gj::eager {

Var Tape::input(const Tensor& t, bool requiresGrad) {
  if (!requiresGrad) return {t, -1};
  entries_.push_back({});
  return {t, static_cast<int>(entries_.size()) - 1};
}

Var Tape::record(Tensor value, std::vector<int> inputs, Backward backward) {
  bool any = false;
  for (int s : inputs) any = any || s >= 0;
  if (!any) return {std::move(value), -1};  // nothing to differentiate: a constant
  entries_.push_back({std::move(inputs), std::move(backward)});
  return {std::move(value), static_cast<int>(entries_.size()) - 1};
}

Var Tape::mm(const Var& a, const Var& b) {
  return record(ops::mm(a.value, b.value), {a.slot, b.slot}, [av = a.value, bv = b.value](const Tensor& g) {
    return std::vector<Tensor>{ops::mm(g, bv.t()), ops::mm(av.t(), g)};
  });
}

Var Tape::t(const Var& a) {
  return record(a.value.t(), {a.slot}, [](const Tensor& g) { return std::vector<Tensor>{g.t()}; });
}

Var Tape::add(const Var& a, const Var& b) {
  return record(ops::add(a.value, b.value), {a.slot, b.slot}, [sa = a.value.sizes(), sb = b.value.sizes()](const Tensor& g) {
    return std::vector<Tensor>{ops::sumToSize(g, sa), ops::sumToSize(g, sb)};
  });
}

Var Tape::sub(const Var& a, const Var& b) {
  return record(ops::sub(a.value, b.value), {a.slot, b.slot}, [sa = a.value.sizes(), sb = b.value.sizes()](const Tensor& g) {
    return std::vector<Tensor>{ops::sumToSize(g, sa), ops::sumToSize(ops::neg(g), sb)};
  });
}

Var Tape::mul(const Var& a, const Var& b) {
  return record(ops::mul(a.value, b.value), {a.slot, b.slot}, [av = a.value, bv = b.value](const Tensor& g) {
    return std::vector<Tensor>{ops::sumToSize(ops::mul(g, bv), av.sizes()), ops::sumToSize(ops::mul(g, av), bv.sizes())};
  });
}

Var Tape::div(const Var& a, const Var& b) {
  Tensor y = ops::div(a.value, b.value);
  return record(y, {a.slot, b.slot}, [bv = b.value, y, sa = a.value.sizes()](const Tensor& g) {
    Tensor ga = ops::div(g, bv);
    return std::vector<Tensor>{ops::sumToSize(ga, sa), ops::sumToSize(ops::neg(ops::mul(ga, y)), bv.sizes())};
  });
}

Var Tape::sigmoid(const Var& a) {
  Tensor y = ops::sigmoid(a.value);
  return record(y, {a.slot}, [y](const Tensor& g) { return std::vector<Tensor>{ops::sigmoidBackward(g, y)}; });
}

Var Tape::tanh(const Var& a) {
  Tensor y = ops::tanh(a.value);
  return record(y, {a.slot}, [y](const Tensor& g) { return std::vector<Tensor>{ops::tanhBackward(g, y)}; });
}

Var Tape::select(const Var& a, int64_t dim, int64_t index) {
  return record(a.value.select(dim, index), {a.slot}, [sa = a.value.sizes(), dim, index](const Tensor& g) {
    return std::vector<Tensor>{ops::selectBackward(g, sa, dim, index)};
  });
}

std::vector<Var> Tape::unbind(const Var& a) {
  std::vector<Var> out;
  for (int64_t i = 0; i < a.value.size(0); ++i) {
    Var piece = record(a.value.select(0, i), {a.slot}, [](const Tensor& g) { return std::vector<Tensor>{g}; });
    if (piece.slot >= 0) entries_[piece.slot].slice = i, entries_[piece.slot].operandSizes = a.value.sizes();
    out.push_back(piece);
  }
  return out;
}

std::vector<Var> Tape::chunk(const Var& a, int64_t chunks, int64_t dim) {
  std::vector<Tensor> pieces = a.value.chunk(chunks, dim);
  std::vector<Var> out;
  int64_t start = 0;
  for (const Tensor& p : pieces) {
    const int64_t end = start + p.size(dim);
    out.push_back(record(p, {a.slot}, [sa = a.value.sizes(), dim, start, end](const Tensor& g) {
      return std::vector<Tensor>{ops::sliceBackward(g, sa, dim, start, end, 1)};
    }));
    start = end;
  }
  return out;
}

Var Tape::stack(const std::vector<Var>& xs, int64_t dim) {
  std::vector<Tensor> values;
  std::vector<int> slots;
  for (const Var& x : xs) values.push_back(x.value), slots.push_back(x.slot);
  return record(ops::stack(values, dim), slots, [n = xs.size(), dim](const Tensor& g) {
    std::vector<Tensor> parts;
    for (size_t i = 0; i < n; ++i) parts.push_back(g.select(dim, static_cast<int64_t>(i)));
    return parts;
  });
}

Var Tape::narrow(const Var& a, int64_t dim, int64_t start, int64_t length) {
  return record(a.value.narrow(dim, start, length), {a.slot},
                [sa = a.value.sizes(), dim, start, length](const Tensor& g) {
                  return std::vector<Tensor>{ops::sliceBackward(g, sa, dim, start, start + length, 1)};
                });
}

Var Tape::cat(const std::vector<Var>& xs, int64_t dim) {
  std::vector<Tensor> values;
  std::vector<int> slots;
  std::vector<int64_t> sizes;
  for (const Var& x : xs) values.push_back(x.value), slots.push_back(x.slot), sizes.push_back(x.value.size(dim));
  return record(ops::cat(values, dim), slots, [sizes, dim](const Tensor& g) { return ops::splitWithSizes(g, sizes, dim); });
}

Var Tape::mean(const Var& a, const std::vector<int64_t>& dims, bool keepdim) {
  return record(ops::mean(a.value, dims, keepdim), {a.slot}, [sa = a.value.sizes(), dims, keepdim](const Tensor& g) {
    return std::vector<Tensor>{ops::meanBackward(g, sa, dims, keepdim)};
  });
}

Var Tape::std(const Var& a, const std::vector<int64_t>& dims, bool unbiased, bool keepdim) {
  Tensor y = ops::stdDev(a.value, dims, unbiased, keepdim);
  return record(y, {a.slot}, [av = a.value, y, dims, unbiased, keepdim](const Tensor& g) {
    Tensor gv = ops::div(g, ops::mul(y, Tensor::scalar(2.0, y.dtype())));  // d sqrt(v) = dv / (2 sqrt(v))
    return std::vector<Tensor>{ops::varBackward(gv, av, dims, unbiased, keepdim)};
  });
}

Var Tape::dropout(const Var& a, double p, const Tensor& rng, int64_t stream) {
  return record(ops::dropout(a.value, p, true, rng, stream), {a.slot}, [p, rng, stream](const Tensor& g) {
    return std::vector<Tensor>{ops::dropout(g, p, true, rng, stream)};
  });
}

Var Tape::layerNorm(const Var& x, const std::vector<int64_t>& shape, const Var& w, const Var& b, double eps) {
  ops::LayerNormResult r = ops::layerNorm(x.value, shape, w.value, b.value, eps);
  return record(r.out, {x.slot, w.slot, b.slot}, [xv = x.value, shape, r, wv = w.value, bv = b.value](const Tensor& g) {
    ops::LayerNormGrads d = ops::layerNormBackward(g, xv, shape, r.mean, r.rstd, wv, bv);
    return std::vector<Tensor>{d.input, d.weight, d.bias};
  });
}

Var Tape::conv2d(const Var& x, const Var& w, const Conv2dParams& p) {
  return record(ops::conv2d(x.value, w.value, Tensor(), p), {x.slot, w.slot},
                [xv = x.value, wv = w.value, p, withInput = x.slot >= 0](const Tensor& g) {
                  ops::Conv2dGrads d = ops::conv2dBackward(g, xv, wv, p, /*withBias=*/false, withInput);
                  return std::vector<Tensor>{d.input, d.weight};
                });
}

Var Tape::batchNorm(const Var& x, const Var& w, const Var& b, Tensor* runningMean, Tensor* runningVar, bool training,
                    double momentum, double eps) {
  ops::BatchNormResult r =
      ops::batchNorm(x.value, w.value, b.value, *runningMean, *runningVar, training, momentum, eps);
  *runningMean = r.runningMean;
  *runningVar = r.runningVar;
  return record(r.out, {x.slot, w.slot, b.slot}, [xv = x.value, wv = w.value, r, training, eps](const Tensor& g) {
    ops::BatchNormGrads d = ops::batchNormBackward(g, xv, wv, r.mean, r.invstd, training, eps);
    return std::vector<Tensor>{d.input, d.weight, d.bias};
  });
}

// Saves its output, not its input (out > 0 exactly where a > 0), as PyTorch's relu does: in a ResNet the
// output is the next convolution's input, saved there anyway, and the input (a batch norm's output) is freed.
Var Tape::relu(const Var& a) {
  Tensor out = ops::relu(a.value);
  return record(out, {a.slot}, [out](const Tensor& g) {
    return std::vector<Tensor>{ops::thresholdBackward(g, out, 0.0)};
  });
}

Var Tape::maxPool2d(const Var& x, const Pool2dParams& p) {
  ops::MaxPoolResult r = ops::maxPool2d(x.value, p);
  return record(r.out, {x.slot}, [xv = x.value, idx = r.indices, p](const Tensor& g) {
    return std::vector<Tensor>{ops::maxPool2dBackward(g, xv, idx, p)};
  });
}

Var Tape::adaptiveAvgPool2d(const Var& x, int64_t outH, int64_t outW) {
  return record(ops::adaptiveAvgPool2d(x.value, outH, outW), {x.slot}, [xv = x.value](const Tensor& g) {
    return std::vector<Tensor>{ops::adaptiveAvgPool2dBackward(g, xv)};
  });
}

Var Tape::flatten(const Var& a, int64_t start, int64_t end) {
  return record(ops::flatten(a.value, start, end), {a.slot}, [sa = a.value.sizes()](const Tensor& g) {
    return std::vector<Tensor>{g.reshape(sa)};
  });
}

Var Tape::linear(const Var& x, const Var& w, const Var& b) { return add(mm(x, t(w)), b); }

void Tape::backward(const std::vector<Var>& outputs, const std::vector<Tensor>& grads) {
  USER_CHECK(!done_, "eager autograd: backward runs once per tape");
  USER_CHECK(outputs.size() == grads.size(), "eager autograd: {} outputs but {} gradients", outputs.size(),
             grads.size());
  done_ = true;
  grads_.assign(entries_.size(), Tensor());
  for (size_t k = 0; k < outputs.size(); ++k)
    if (outputs[k].slot >= 0) grads_[outputs[k].slot] = ops::autogradAdd(grads_[outputs[k].slot], grads[k]);
  for (int s = static_cast<int>(entries_.size()) - 1; s >= 0; --s) {
    Entry& e = entries_[s];
    if (!e.backward || !grads_[s].defined()) continue;
    std::vector<Tensor> in = e.backward(grads_[s]);
    for (size_t i = 0; i < e.inputs.size(); ++i) {
      if (e.inputs[i] < 0 || !in[i].defined()) continue;
      Tensor& to = grads_[e.inputs[i]];
      if (e.slice < 0) {
        to = ops::autogradAdd(to, in[i]);
        continue;
      }
      if (!to.defined()) to = Tensor::zeros(e.operandSizes, in[i].dtype(), in[i].device());
      Tensor part = to.select(0, e.slice);
      if (part.device() == DeviceKind::Cuda) part.copyFrom(ops::add(part, in[i]));
      else ops::addInPlace(part, in[i]);
    }
    e.backward = nullptr;  // frees what the closure saved
    grads_[s] = Tensor();
  }
}

Tensor Tape::grad(const Var& v) const {
  USER_CHECK(done_, "eager autograd: no backward has run");
  return v.slot >= 0 && v.slot < static_cast<int>(grads_.size()) ? grads_[v.slot] : Tensor();
}

}  // namespace gj::eager
