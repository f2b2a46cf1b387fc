// graphir: dump, build, inspect and run graphjit IR. `graphir --help` and `graphir SUB --help`.
#include "executors/interpreter.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "models/model.h"
#include "passes/pass_manager.h"
#include "runtime/npy.h"
#include "support/error.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>

namespace fs = std::filesystem;

namespace gj::tools {
namespace {

void writeText(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::cout << text;
    return;
  }
  std::ofstream out(path);
  USER_CHECK(out.good(), "cannot write '{}'", path);
  out << text;
}

int cmdDump(const std::string& file) {
  auto g = parseIRFile(file);
  std::cout << printIR(*g);
  return 0;
}

int cmdPasses(const std::string& file, const std::string& passList, bool printAfterAll, bool time) {
  auto g = parseIRFile(file);
  PassOptions opts = PassOptions::fromEnvironment();
  opts.verifyEach = true;
  opts.log = &std::cout;
  if (printAfterAll) opts.logAfter = {"all"};
  auto records = runPasses(*g, parsePassList(passList), opts);
  if (!printAfterAll) std::cout << printIR(*g);
  if (time) {
    std::cerr << fmt::format("{:<28} {:>9} {:>10}\n", "pass", "changed", "ms");
    for (const PassRecord& r : records) std::cerr << fmt::format("{:<28} {:>9} {:>10.3f}\n", r.name, r.changed, r.ms);
  }
  return 0;
}

int cmdOps() {
  for (const OpInfo& op : allOps())
    std::cout << fmt::format("{:<22} {:<10} {}\n", op.name, opGroupName(op.group), op.schema);
  return 0;
}

int cmdModel(const std::string& name, const ModelConfig& cfg, const std::string& out) {
  Model m = buildModel(name, cfg);
  writeText(out, printIR(*m.graph));
  return 0;
}

std::string outputName(const Value* v, size_t i) { return v->name().empty() ? fmt::format("output{}", i) : v->name(); }

int cmdRun(const std::string& file, const std::string& inputsDir, const std::string& outDir) {
  auto g = parseIRFile(file);
  std::vector<IValue> inputs;
  for (const Value* in : g->inputs()) {
    USER_CHECK(in->type().isTensor(), "graph input %{} is {}: graphir run reads only tensor inputs from .npy files",
               in->name(), in->type().str());
    std::string path = (fs::path(inputsDir) / (in->name() + ".npy")).string();
    USER_CHECK(fs::exists(path), "missing input: graph input %{} needs {}", in->name(), path);
    inputs.push_back(readNpy(path));
  }
  auto outputs = Interpreter(*g).run(std::move(inputs));
  fs::create_directories(fs::path(outDir) / "outputs");
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string name = outputName(g->outputs()[i], i);
    USER_CHECK(outputs[i].isTensor(), "output %{} is {}, not a tensor", name, outputs[i].describe());
    std::string path = (fs::path(outDir) / "outputs" / (name + ".npy")).string();
    writeNpy(path, outputs[i].toTensor());
    std::cout << fmt::format("wrote {} {}\n", path, shapeStr(outputs[i].toTensor().sizes()));
  }
  return 0;
}

void addModelOptions(CLI::App* sub, ModelConfig& c) {
  sub->add_option("--variant", c.variant, "LSTM variant: jit, jit_premul, jit_premul_bias, jit_simple, jit_multilayer");
  sub->add_option("--seqLength", c.seqLength)->check(CLI::PositiveNumber);
  sub->add_option("--miniBatch", c.miniBatch)->check(CLI::PositiveNumber);
  sub->add_option("--inputSize", c.inputSize)->check(CLI::PositiveNumber);
  sub->add_option("--hiddenSize", c.hiddenSize)->check(CLI::PositiveNumber);
  sub->add_option("--numLayers", c.numLayers)->check(CLI::PositiveNumber);
  sub->add_option("--vocab", c.vocab)->check(CLI::PositiveNumber);
  sub->add_option("--embedding", c.embedding)->check(CLI::PositiveNumber);
  sub->add_option("--classes", c.classes)->check(CLI::PositiveNumber);
  sub->add_option("--embedDim", c.embedDim)->check(CLI::PositiveNumber);
  sub->add_option("--numHeads", c.numHeads)->check(CLI::PositiveNumber);
}

}  // namespace
}  // namespace gj::tools

int main(int argc, char** argv) {
  using namespace gj::tools;
  CLI::App app{"graphir: dump, build, inspect and run graphjit IR"};
  app.require_subcommand(1);
  std::string file, out, inputsDir, outDir, modelName;
  gj::ModelConfig cfg;

  auto* dump = app.add_subcommand("dump", "parse and verify an IR file, then print it");
  dump->add_option("file", file, "IR file")->required();
  auto* ops = app.add_subcommand("ops", "list every op of the IR with its group and schema");
  std::string passList;
  bool printAfterAll = false, timePasses = false;
  auto* passes = app.add_subcommand("passes", "run passes by name on an IR file and print the result");
  passes->add_option("file", file, "IR file")->required();
  passes->add_option("--passes", passList, "comma-separated pass names (graphir passes --list)");
  passes->add_flag("--print-after-all", printAfterAll, "print the graph after every pass");
  passes->add_flag("--time", timePasses, "print each pass's time to standard error");
  bool listPasses = false;
  passes->add_flag("--list", listPasses, "list the passes and exit");
  auto* model = app.add_subcommand("model", "print the IR of a built-in model");
  model->add_option("name", modelName, "lstm_cell, lstm, lstm_lm, lstm_classifier, linear, softmax, conv2d, "
                                       "multihead_attention")->required();
  model->add_option("-o,--output", out, "write to FILE instead of standard output");
  addModelOptions(model, cfg);
  auto* run = app.add_subcommand("run", "run an IR file on .npy inputs with the interpreter");
  run->add_option("file", file, "IR file")->required();
  run->add_option("--inputs", inputsDir, "folder holding NAME.npy for every graph input")->required();
  run->add_option("--out", outDir, "folder for outputs/NAME.npy")->required();

  CLI11_PARSE(app, argc, argv);
  try {
    if (*dump) return cmdDump(file);
    if (*ops) return cmdOps();
    if (*passes && listPasses) {
      for (const gj::PassInfo& p : gj::allPasses()) std::cout << fmt::format("{:<28} {}\n", p.name, p.description);
      return 0;
    }
    if (*passes) return cmdPasses(file, passList, printAfterAll, timePasses);
    if (*model) return cmdModel(modelName, cfg, out);
    if (*run) return cmdRun(file, inputsDir, outDir);
  } catch (const gj::Error& e) {
    std::cerr << "graphir: error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
