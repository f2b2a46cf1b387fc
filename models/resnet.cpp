#include "models/resnet.h"

#include "ir/builder.h"
#include "models/lstm.h"
#include "runtime/ops/ops.h"
#include "support/error.h"

#include <cmath>
#include <map>

namespace gj {

namespace {

constexpr double kBatchNormMomentum = 0.1, kBatchNormEps = 1e-5;  // nn.BatchNorm2d's defaults

struct ResnetShape {
  bool bottleneck;
  std::vector<int64_t> blocks;
  int64_t channels, width, classes;
  int64_t expansion() const { return bottleneck ? 4 : 1; }
};

// One walk over torchvision's structure, for three emitters: SpecEmitter lists the parameters (names and
// sizes) in the order of their first use, which is the state_dict's; GraphEmitter writes the graph;
// TapeEmitter runs the kernels on an eager tape. Each names a parameter by its state_dict prefix.
template <typename E>
typename E::V resnetForward(E& e, const ResnetShape& r, typename E::V x) {
  using V = typename E::V;
  x = e.relu(e.bn(e.conv(x, "conv1", r.channels, r.width, 7, 2, 3), "bn1", r.width));
  x = e.maxPool(x, 3, 2, 1);
  int64_t inplanes = r.width;
  for (size_t layer = 0; layer < r.blocks.size(); ++layer) {
    const int64_t planes = r.width << layer, out = planes * r.expansion();
    for (int64_t block = 0; block < r.blocks[layer]; ++block) {
      const std::string p = fmt::format("layer{}.{}.", layer + 1, block);
      const int64_t stride = layer > 0 && block == 0 ? 2 : 1;
      V y;
      if (!r.bottleneck) {
        y = e.relu(e.bn(e.conv(x, p + "conv1", inplanes, planes, 3, stride, 1), p + "bn1", planes));
        y = e.bn(e.conv(y, p + "conv2", planes, planes, 3, 1, 1), p + "bn2", planes);
      } else {
        y = e.relu(e.bn(e.conv(x, p + "conv1", inplanes, planes, 1, 1, 0), p + "bn1", planes));
        y = e.relu(e.bn(e.conv(y, p + "conv2", planes, planes, 3, stride, 1), p + "bn2", planes));
        y = e.bn(e.conv(y, p + "conv3", planes, out, 1, 1, 0), p + "bn3", out);
      }
      V identity = x;
      if (stride != 1 || inplanes != out)
        identity = e.bn(e.conv(x, p + "downsample.0", inplanes, out, 1, stride, 0), p + "downsample.1", out);
      x = e.relu(e.add(y, identity));
      inplanes = out;
    }
  }
  return e.linear(e.flatten(e.avgPool(x)), "fc", inplanes, r.classes);
}

struct SpecEmitter {
  using V = int;
  std::vector<InputSpec> specs;
  std::vector<std::string> statistics;  ///< the batch norms' prefixes
  // Random values in [low, high) for tests and benchmarks: weights as PyTorch initializes them (within
  // 1 / sqrt(fan_in)), batch norms' parameters and statistics near their initial 1 and 0, variances positive.
  void param(const std::string& name, Shape sizes, double low, double high) {
    InputSpec s{name, DType::Float32, std::move(sizes)};
    s.floatLow = low, s.floatHigh = high;
    specs.push_back(std::move(s));
  }
  static double fanInBound(int64_t fanIn) { return 1.0 / std::sqrt(static_cast<double>(fanIn)); }
  V conv(V, const std::string& name, int64_t in, int64_t out, int64_t k, int64_t, int64_t) {
    const double bound = fanInBound(in * k * k);
    param(name + ".weight", {out, in, k, k}, -bound, bound);
    return 0;
  }
  V bn(V, const std::string& name, int64_t c) {
    param(name + ".weight", {c}, 0.5, 1.5);
    param(name + ".bias", {c}, -0.5, 0.5);
    param(name + ".running_mean", {c}, -0.5, 0.5);
    param(name + ".running_var", {c}, 0.5, 1.5);
    specs.end()[-1].requiresGrad = specs.end()[-2].requiresGrad = false;
    statistics.push_back(name);
    return 0;
  }
  V linear(V, const std::string& name, int64_t in, int64_t out) {
    const double bound = fanInBound(in);
    param(name + ".weight", {out, in}, -bound, bound);
    param(name + ".bias", {out}, -bound, bound);
    return 0;
  }
  V relu(V) { return 0; }
  V add(V, V) { return 0; }
  V maxPool(V, int64_t, int64_t, int64_t) { return 0; }
  V avgPool(V) { return 0; }
  V flatten(V) { return 0; }
};

struct GraphEmitter {
  using V = Value*;
  GraphBuilder& b;
  std::map<std::string, Value*> params;
  bool training;
  std::vector<Value*> statistics;  ///< running_mean, running_var of each batch norm, in order
  V conv(V x, const std::string& name, int64_t, int64_t, int64_t, int64_t stride, int64_t pad) {
    return b.op(OpKind::Conv2d, {x, params.at(name + ".weight"), b.none(), b.ints({stride, stride}), b.ints({pad, pad}),
                                 b.ints({1, 1}), b.i(1)});
  }
  V bn(V x, const std::string& name, int64_t) {
    std::vector<Value*> in = {x, params.at(name + ".weight"), params.at(name + ".bias"),
                              params.at(name + ".running_mean"), params.at(name + ".running_var"), b.b(training),
                              b.f(kBatchNormMomentum), b.f(kBatchNormEps)};
    if (!training) {
      in.push_back(b.b(true));  // cudnn_enabled
      return b.op(OpKind::BatchNorm, in);
    }
    Node* n = b.node(OpKind::NativeBatchNorm, in, 5);
    statistics.push_back(n->output(3)->setName(name + ".running_mean"));
    statistics.push_back(n->output(4)->setName(name + ".running_var"));
    return n->output(0);
  }
  V linear(V x, const std::string& name, int64_t, int64_t) {
    return b.op(OpKind::Linear, {x, params.at(name + ".weight"), params.at(name + ".bias")});
  }
  V relu(V x) { return b.op(OpKind::Relu, {x}); }
  V add(V x, V y) { return b.op(OpKind::Add, {x, y, b.i(1)}); }
  V maxPool(V x, int64_t k, int64_t stride, int64_t pad) {
    return b.op(OpKind::MaxPool2d, {x, b.ints({k, k}), b.ints({stride, stride}), b.ints({pad, pad}), b.ints({1, 1}),
                                    b.b(false)});
  }
  V avgPool(V x) { return b.op(OpKind::AdaptiveAvgPool2d, {x, b.ints({1, 1})}); }
  V flatten(V x) { return b.op(OpKind::Flatten, {x, b.i(1), b.i(-1)}); }
};

struct TapeEmitter {
  using V = eager::Var;
  eager::Tape& tape;
  std::map<std::string, eager::Var> params;
  bool training;
  std::vector<eager::Var> statistics;
  V conv(V x, const std::string& name, int64_t, int64_t, int64_t, int64_t stride, int64_t pad) {
    ops::Conv2dParams p;
    p.strideH = p.strideW = stride;
    p.padH = p.padW = pad;
    return tape.conv2d(x, params.at(name + ".weight"), p);
  }
  V bn(V x, const std::string& name, int64_t) {
    Tensor mean = params.at(name + ".running_mean").value, var = params.at(name + ".running_var").value;
    V y = tape.batchNorm(x, params.at(name + ".weight"), params.at(name + ".bias"), &mean, &var, training,
                         kBatchNormMomentum, kBatchNormEps);
    if (training) statistics.insert(statistics.end(), {{mean, -1}, {var, -1}});
    return y;
  }
  V linear(V x, const std::string& name, int64_t, int64_t) {
    return tape.linear(x, params.at(name + ".weight"), params.at(name + ".bias"));
  }
  V relu(V x) { return tape.relu(x); }
  V add(V x, V y) { return tape.add(x, y); }
  V maxPool(V x, int64_t k, int64_t stride, int64_t pad) {
    ops::Pool2dParams p;
    p.kH = p.kW = k;
    p.strideH = p.strideW = stride;
    p.padH = p.padW = pad;
    return tape.maxPool2d(x, p);
  }
  V avgPool(V x) { return tape.adaptiveAvgPool2d(x, 1, 1); }
  V flatten(V x) { return tape.flatten(x, 1, -1); }
};

}  // namespace

Model buildResnet(const std::string& name, const ModelConfig& c) {
  ResnetShape r;
  if (name == "resnet18")
    r = {false, {2, 2, 2, 2}, c.channels, c.baseWidth, c.imageClasses};
  else if (name == "resnet50")
    r = {true, {3, 4, 6, 3}, c.channels, c.baseWidth, c.imageClasses};
  else
    throw Error(fmt::format("unknown ResNet '{}'", name), "", "ResNets: resnet18, resnet50");
  USER_CHECK(c.miniBatch >= 1 && c.channels >= 1 && c.baseWidth >= 1 && c.imageClasses >= 1 && c.imageSize >= 1,
             "{}: miniBatch, channels, width, classes and imageSize must be positive", name);
  USER_CHECK(!c.training || c.miniBatch >= 2,
             "{}: training normalizes by the batch's statistics, which needs a miniBatch of at least 2 (got {})", name,
             c.miniBatch);
  Model m;
  m.name = name;
  SpecEmitter spec;
  resnetForward(spec, r, 0);
  m.inputs = {{"input", DType::Float32, {c.miniBatch, c.channels, c.imageSize, c.imageSize}}};
  m.inputs.insert(m.inputs.end(), spec.specs.begin(), spec.specs.end());
  m.outputs = {"output"};
  if (c.training)
    for (const auto& bn : spec.statistics) m.outputs.insert(m.outputs.end(), {bn + ".running_mean", bn + ".running_var"});

  auto g = std::make_shared<Graph>();
  GraphBuilder b(*g);
  GraphEmitter ge{b, {}, c.training, {}};
  std::vector<Value*> in;
  for (const auto& s : m.inputs) in.push_back(g->addInput(Type::tensor(s.dtype, s.sizes), s.name));
  for (size_t i = 1; i < in.size(); ++i) ge.params[m.inputs[i].name] = in[i];
  g->registerOutput(resnetForward(ge, r, in[0])->setName("output"));
  for (Value* s : ge.statistics) g->registerOutput(s);
  m.graph = g;

  m.eagerAutograd = [r, training = c.training, names = m.inputs](eager::Tape& tape, const std::vector<eager::Var>& in) {
    TapeEmitter te{tape, {}, training, {}};
    for (size_t i = 1; i < in.size(); ++i) te.params[names[i].name] = in[i];
    std::vector<eager::Var> out = {resnetForward(te, r, in[0])};
    out.insert(out.end(), te.statistics.begin(), te.statistics.end());
    return out;
  };
  m.eager = [f = m.eagerAutograd](const std::vector<Tensor>& in) { return eagerValues(f, in); };
  return m;
}

}  // namespace gj
