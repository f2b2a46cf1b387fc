#include "models/reference_case.h"

#include "runtime/npy.h"
#include "support/error.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>

namespace gj {

static std::map<std::string, Tensor> loadAll(const std::string& dir, const std::vector<std::string>& names) {
  std::map<std::string, Tensor> out;
  for (const auto& n : names) out[n] = readNpy(dir + "/" + n + ".npy");
  return out;
}

static ModelConfig configOf(const nlohmann::json& p, ReferenceCase& c) {
  ModelConfig cfg;
  auto get = [&](const char* key, int64_t& field) {
    if (p.contains(key)) field = p.at(key).get<int64_t>();
  };
  get("seqLength", cfg.seqLength);
  get("miniBatch", cfg.miniBatch);
  get("inputSize", cfg.inputSize);
  get("hiddenSize", cfg.hiddenSize);
  get("numLayers", cfg.numLayers);
  get("vocab", cfg.vocab);
  get("embedding", cfg.embedding);
  get("classes", cfg.classes);
  get("embed_dim", cfg.embedDim);
  get("num_heads", cfg.numHeads);
  get("stride", cfg.stride);
  get("padding", cfg.padding);
  get("dim", cfg.dim);
  if (p.contains("decompose")) cfg.decomposeLayerNorm = p.at("decompose").get<bool>();
  if (p.contains("per_sequence")) cfg.perSequence = p.at("per_sequence").get<bool>();
  if (p.contains("sgd_lr")) c.sgdLr = p.at("sgd_lr").get<double>();
  if (p.contains("training")) cfg.training = p.at("training").get<bool>();
  get("width", cfg.baseWidth);
  get("imageSize", cfg.imageSize);
  if (c.model == "resnet18" || c.model == "resnet50") get("classes", cfg.imageClasses);
  // Sizes the manifest does not spell out come from the inputs themselves.
  auto sizes = [&](const char* n) {
    USER_CHECK(c.inputs.count(n), "{}: the manifest of a {} case needs an input named {}", c.dir, c.model, n);
    return c.inputs.at(n).sizes();
  };
  if (c.model == "linear" || c.model == "softmax") {
    Shape s = sizes("input");
    USER_CHECK(s.size() == 2, "{}: {} input must be 2-d, got {}", c.dir, c.model, shapeStr(s));
    cfg.rows = s[0], cfg.features = s[1];
    if (c.model == "linear") cfg.outFeatures = sizes("weight")[0];
  } else if (c.model == "conv2d") {
    Shape x = sizes("input"), w = sizes("weight");
    USER_CHECK(x.size() == 4 && w.size() == 4, "{}: conv2d input and weight must be 4-d", c.dir);
    cfg.miniBatch = x[0], cfg.channels = x[1], cfg.height = x[2], cfg.width = x[3];
    cfg.outChannels = w[0], cfg.kernel = w[2];
  } else if (c.model == "multihead_attention") {
    Shape q = sizes("query");
    USER_CHECK(q.size() == 3, "{}: query must be [L, N, E]", c.dir);
    cfg.seqLength = q[0], cfg.miniBatch = q[1];
  } else if (c.model == "lstm_classifier") {
    cfg.vocab = sizes("embedding.weight")[0];
  }
  return cfg;
}

ReferenceCase readReferenceCase(const std::string& dir) {
  ReferenceCase c;
  c.dir = dir;
  std::string path = dir + "/manifest.json";
  std::ifstream in(path);
  USER_CHECK(in.good(), "cannot open '{}': not a reference case folder (it needs manifest.json, inputs/, "
             "outputs/, grad_outputs/ and grads/)", path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
    c.model = j.at("model").get<std::string>();
    c.inputNames = j.at("inputs").get<std::vector<std::string>>();
    c.outputNames = j.at("outputs").get<std::vector<std::string>>();
    c.gradNames = j.value("grads", std::vector<std::string>{});
    c.inputs = loadAll(dir + "/inputs", c.inputNames);
    c.outputs = loadAll(dir + "/outputs", c.outputNames);
    c.gradOutputs = loadAll(dir + "/grad_outputs", j.value("grad_outputs", std::vector<std::string>{}));
    c.grads = loadAll(dir + "/grads", c.gradNames);
    c.config = configOf(j.value("params", nlohmann::json::object()), c);
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("malformed manifest: {}", e.what()), path);
  }
  return c;
}

std::vector<Tensor> caseInputs(const Model& m, const ReferenceCase& c) {
  std::vector<Tensor> xs;
  for (const auto& s : m.inputs) {
    auto it = c.inputs.find(s.name);
    USER_CHECK(it != c.inputs.end(), "{}: the {} model needs an input named {}, which the case lacks", c.dir, m.name,
               s.name);
    xs.push_back(it->second);
  }
  return xs;
}

double relativeError(const Tensor& out, const Tensor& ref) {
  USER_CHECK(out.sizes() == ref.sizes(), "shape {} vs reference {}", shapeStr(out.sizes()), shapeStr(ref.sizes()));
  // float32 against a float64 reference is a comparison of values; a bool or an integer must be one
  USER_CHECK(isFloating(out.dtype()) == isFloating(ref.dtype()), "dtype {} vs reference {}", dtypeName(out.dtype()),
             dtypeName(ref.dtype()));
  const bool exact = !isFloating(ref.dtype());
  double num = 0, den = 0;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    const double o = out.item(i), r = ref.item(i);
    if (exact || !std::isfinite(r) || !std::isfinite(o)) {
      // NaN matches NaN; an infinity, an integer or a bool only itself
      if (std::isnan(r) ? !std::isnan(o) : o != r) return INFINITY;
      continue;
    }
    num += (o - r) * (o - r);
    den += r * r;
  }
  return den == 0 ? std::sqrt(num) : std::sqrt(num / den);
}

}  // namespace gj
