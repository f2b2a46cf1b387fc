#include "tests/support/reference.h"

#include "runtime/npy.h"
#include "support/error.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>

namespace gj::test {

std::string dataDir() { return GJ_TEST_DATA_DIR; }

static std::map<std::string, Tensor> loadAll(const std::string& dir, const std::vector<std::string>& names) {
  std::map<std::string, Tensor> out;
  for (const auto& n : names) out[n] = readNpy(dir + "/" + n + ".npy");
  return out;
}

ReferenceCase loadCase(const std::string& name) {
  ReferenceCase c;
  c.dir = dataDir() + "/" + name;
  std::ifstream in(c.dir + "/manifest.json");
  USER_CHECK(in.good(), "reference case '{}' not found under {}", name, dataDir());
  nlohmann::json j = nlohmann::json::parse(in);
  c.model = j.at("model");
  c.inputNames = j.at("inputs").get<std::vector<std::string>>();
  c.outputNames = j.at("outputs").get<std::vector<std::string>>();
  c.gradNames = j.at("grads").get<std::vector<std::string>>();
  const auto& p = j.at("params");
  auto get = [&](const char* key, int64_t& field) {
    if (p.contains(key)) field = p.at(key).get<int64_t>();
  };
  ModelConfig& cfg = c.config;
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
  if (p.contains("sgd_lr")) c.sgdLr = p.at("sgd_lr").get<double>();
  c.inputs = loadAll(c.dir + "/inputs", c.inputNames);
  c.outputs = loadAll(c.dir + "/outputs", c.outputNames);
  c.gradOutputs = loadAll(c.dir + "/grad_outputs", j.at("grad_outputs").get<std::vector<std::string>>());
  c.grads = loadAll(c.dir + "/grads", c.gradNames);
  // Shapes the manifest does not spell out come from the inputs themselves.
  auto shapeOf = [&](const char* n) { return c.inputs.count(n) ? c.inputs.at(n).sizes() : Shape{}; };
  if (c.model == "linear" || c.model == "softmax") {
    Shape s = shapeOf("input");
    cfg.rows = s[0];
    cfg.features = s[1];
    if (c.inputs.count("weight")) cfg.outFeatures = c.inputs.at("weight").size(0);
  } else if (c.model == "conv2d") {
    Shape x = shapeOf("input"), w = shapeOf("weight");
    cfg.miniBatch = x[0], cfg.channels = x[1], cfg.height = x[2], cfg.width = x[3];
    cfg.outChannels = w[0], cfg.kernel = w[2];
  } else if (c.model == "multihead_attention") {
    Shape q = shapeOf("query");
    cfg.seqLength = q[0], cfg.miniBatch = q[1];
  } else if (c.model == "lstm_classifier") {
    cfg.vocab = c.inputs.at("embedding.weight").size(0);
  }
  return c;
}

double relError(const Tensor& out, const Tensor& ref) {
  USER_CHECK(out.sizes() == ref.sizes(), "relError: shape {} vs reference {}", shapeStr(out.sizes()),
             shapeStr(ref.sizes()));
  double num = 0, den = 0;
  for (int64_t i = 0; i < ref.numel(); ++i) {
    double d = out.item(i) - ref.item(i);
    num += d * d;
    den += ref.item(i) * ref.item(i);
  }
  return den == 0 ? std::sqrt(num) : std::sqrt(num / den);
}

std::vector<Tensor> inputsFor(const Model& m, const ReferenceCase& c) {
  std::vector<Tensor> xs;
  for (const auto& s : m.inputs) {
    auto it = c.inputs.find(s.name);
    USER_CHECK(it != c.inputs.end(), "case {} has no input named {}", c.dir, s.name);
    xs.push_back(it->second);
  }
  return xs;
}

}  // namespace gj::test
