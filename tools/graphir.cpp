// graphir: dump, build, transform, inspect and run graphjit IR. `graphir --help`, `graphir SUB --help`.
#include "passes/pass_manager.h"
#include "support/error.h"
#include "tools/cli.h"
#include "tools/graphir.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>
#include <new>

namespace {

void addModelOptions(CLI::App* sub, gj::ModelConfig& c) {
  sub->add_option("--variant", c.variant, "LSTM variant: jit, jit_premul, jit_premul_bias, jit_simple, jit_multilayer");
  for (auto [flag, field] : std::initializer_list<std::pair<const char*, int64_t*>>{
           {"--seqLength", &c.seqLength}, {"--miniBatch", &c.miniBatch}, {"--inputSize", &c.inputSize},
           {"--hiddenSize", &c.hiddenSize}, {"--numLayers", &c.numLayers}, {"--vocab", &c.vocab},
           {"--embedding", &c.embedding}, {"--embedDim", &c.embedDim}, {"--imageSize", &c.imageSize},
           {"--baseWidth", &c.baseWidth},
           {"--numHeads", &c.numHeads}, {"--channels", &c.channels}, {"--outChannels", &c.outChannels},
           {"--height", &c.height}, {"--width", &c.width}, {"--kernel", &c.kernel}, {"--stride", &c.stride},
           {"--rows", &c.rows}, {"--features", &c.features}, {"--outFeatures", &c.outFeatures}})
    sub->add_option(flag, *field)->check(gj::cli::positive());
  sub->add_option_function<int64_t>(
         "--classes", [&c](int64_t v) { c.classes = c.imageClasses = v; },
         "lstm_classifier and resnet: output classes")
      ->check(gj::cli::positive());
  sub->add_flag_function(
      "--eval", [&c](int64_t) { c.training = false; },
      "resnet: batch norm by the running statistics (no updated statistics among the outputs)");
  sub->add_option("--padding", c.padding)->check(gj::cli::nonNegative());
  sub->add_option("--dim", c.dim, "softmax dimension");
  sub->add_flag("--decompose", c.decomposeLayerNorm, "lnlstm: custom_lstms' decomposed LayerNorm (jit_layernorm_decom)");
  sub->add_flag("--per-sequence", c.perSequence,
                "vl_lstm: fastrnns' loop over the sequences (vl_jit) instead of the packed graph");
  sub->add_option("--dropout", c.dropout,
                  "lstm: dropout between layers in training (needs --numLayers 2 or more; adds the input rng)")
      ->check(CLI::Range(0.0, 0.999999));
}

void addRunOptions(CLI::App* sub, gj::tools::RunSettings& s) {
  gj::cli::addFuserOption(sub, s.fuser, "the fuser");
  gj::cli::addExecutorOption(sub, "--executor", s.executor, "the executor");
  sub->add_option("--device", s.device, "cpu or cuda")->check(gj::cli::oneOf({"cpu", "cuda"}));
  sub->add_flag("--persistent-recurrences", s.persistentRecurrences,
                "device cuda: run each unrolled recurrence (an LSTM layer's steps) as one persistent kernel");
  // Hidden (no group): the conformance tests plant an error in every fused kernel with it.
  sub->add_flag("--inject-kernel-error", s.injectKernelError, "tests: every fused kernel's first output 1% off")
      ->group("");
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gj::tools;
  CLI::App app{"graphir: dump, build, transform, inspect and run graphjit IR", "graphir"};
  app.require_subcommand(1);
  app.set_version_flag("--version", gj::cli::versionString());
  std::string file, out, inputsDir, outDir, gradDir, modelName, passList, target = "cpu";
  gj::FuserKind fuser = gj::FuserKind::None;
  gj::ExecutorKind pipelineOf = gj::ExecutorKind::Legacy;
  bool types = false, torchscript = false, printAfterAll = false, timePasses = false, listPasses = false, backward = false,
       ptxasStats = false, persistentRecurrences = false;
  gj::ModelConfig cfg;
  RunSettings run;
  gj::CudaLaunchOptions launch;

  auto* dump = app.add_subcommand("dump", "parse and verify an IR file, then print it");
  dump->add_option("file", file, "IR file")->required();
  dump->add_flag("--types", types, "complete every type by shape propagation first");
  dump->add_flag("--torchscript", torchscript, "print it as PyTorch's TorchScript (torch._C.parse_ir reads it)");
  auto* ops = app.add_subcommand("ops", "list every op of the IR with its group and schema");
  auto* model = app.add_subcommand("model", "print the IR of a built-in model");
  model->add_option("name", modelName,
                    "lstm_cell, lstm, lnlstm, vl_lstm, lstm_lm, lstm_classifier, linear, softmax, conv2d, "
                    "multihead_attention, resnet18, resnet50")
      ->required();
  model->add_option("-o,--output", out, "write to FILE instead of standard output");
  model->add_flag("--torchscript", torchscript, "print it as PyTorch's TorchScript (torch._C.parse_ir reads it)");
  model->add_option("--inputs", inputsDir, "also write seeded random inputs, DIR/NAME.npy per graph input");
  addModelOptions(model, cfg);
  auto* passes = app.add_subcommand("passes", "run passes by name, or an executor's pipeline, and print the result");
  passes->add_option("file", file, "IR file");
  passes->add_option("--passes", passList, "comma-separated pass names (see --list)");
  auto* pipeline = gj::cli::addExecutorOption(passes, "--pipeline", pipelineOf, "an executor's whole pipeline");
  passes->add_flag("--print-after-all", printAfterAll, "print the graph after every pass");
  passes->add_flag("--time", timePasses, "print each pass's time to standard error");
  passes->add_flag("--list", listPasses, "list the passes and exit");
  auto* fuse = app.add_subcommand("fuse", "the graph after the legacy pipeline with a fuser: groups and their subgraphs");
  fuse->add_option("file", file, "IR file with complete input types")->required();
  gj::cli::addFuserOption(fuse, fuser, "the fuser", false)->required();
  fuse->add_flag("--backward", backward, "float inputs require grad: also show the forward and backward graphs");
  auto* codegen = app.add_subcommand("codegen", "the code generated for every fusion group");
  codegen->add_option("file", file, "IR file with complete input types")->required();
  gj::cli::addFuserOption(codegen, fuser, "the fuser", false)->required();
  codegen->add_option("--target", target, "cpu (LLVM IR) or cuda (CUDA C)")->check(gj::cli::oneOf({"cpu", "cuda"}));
  codegen->add_option("-o,--output", outDir, "write one file per group into DIR");
  codegen->add_flag("--backward", backward, "float inputs require grad: also the backward graphs' groups");
  codegen->add_option("--cuda-pointwise-block-size", launch.blockSize, "cuda target: threads per block")
      ->check(gj::cli::between(1, 1024));
  codegen->add_option("--cuda-pointwise-block-count", launch.blockCount, "cuda target: blocks, with loop level 3")
      ->check(gj::cli::positive());
  codegen->add_option("--cuda-pointwise-loop-level", launch.loopLevel, "cuda target: 2 or 3, as in fastrnns")
      ->check(gj::cli::between(2, 3));
  codegen->add_flag("--stats", ptxasStats,
                    "cuda target: compile each kernel for sm_90 and print ptxas' registers, spills, stack and shared "
                    "memory (no GPU needed)");
  codegen->add_flag("--persistent-recurrences", persistentRecurrences,
                    "cuda target: also each persistent recurrence's kernel (docs/fusers.md)");
  auto* explain = app.add_subcommand("explain", "why each op outside a fusion group was not fused");
  explain->add_option("file", file, "IR file with complete input types")->required();
  gj::cli::addFuserOption(explain, fuser, "the fuser", false)->required();
  explain->add_flag("--backward", backward, "float inputs require grad: also the backward graphs' ops");
  explain->add_flag("--persistent-recurrences", persistentRecurrences,
                    "also say which recurrences --device=cuda would run as one persistent kernel, and why not");
  auto* dot = app.add_subcommand("dot", "the graph for Graphviz, fusion groups as clusters");
  dot->add_option("file", file, "IR file")->required();
  gj::cli::addFuserOption(dot, fuser, "fuse first with this fuser");
  dot->add_option("-o,--output", out, "FILE.dot, FILE.svg or FILE.png (svg and png need Graphviz's dot)");
  auto* stats = app.add_subcommand("stats", "counts of nodes by op, loops, blocks");
  stats->add_option("file", file, "IR file")->required();
  auto* runCmd = app.add_subcommand("run", "run an IR file on .npy inputs (DIR/NAME.npy per graph input)");
  runCmd->add_option("file", file, "IR file")->required();
  runCmd->add_option("--inputs", inputsDir, "folder holding NAME.npy for every graph input")->required();
  runCmd->add_option("--out", outDir, "folder for outputs/NAME.npy (and grads/NAME.npy)")->required();
  runCmd->add_flag("--backward", backward, "also run backward and write the inputs' gradients");
  runCmd->add_option("--grad-outputs", gradDir, "folder holding NAME.npy, the gradient of every output (default: ones)");
  addRunOptions(runCmd, run);
  auto* check = app.add_subcommand("check", "compare a model with a reference case (tests/data layout)");
  check->add_option("case", file, "case folder with manifest.json, inputs/, outputs/, grad_outputs/, grads/")
      ->required();
  addRunOptions(check, run);

  if (auto status = gj::cli::parse(app, argc, argv)) return *status;
  try {
    if (*dump) return cmdDump(file, types, torchscript);
    if (*ops) return cmdOps();
    if (*model) return cmdModel(modelName, cfg, out, torchscript, inputsDir);
    if (*passes) {
      if (listPasses) {
        for (const gj::PassInfo& p : gj::allPasses()) std::cout << fmt::format("{:<28} {}\n", p.name, p.description);
        return 0;
      }
      USER_CHECK(!file.empty(), "graphir passes needs an IR file (or --list)");
      USER_CHECK(!passList.empty() || *pipeline, "graphir passes needs --passes=a,b,... or --pipeline=...");
      return cmdPasses(file, passList, *pipeline ? std::optional(pipelineOf) : std::nullopt, printAfterAll, timePasses);
    }
    if (*fuse) return cmdFuse(file, fuser, backward);
    if (*codegen) return cmdCodegen(file, fuser, target, outDir, backward, launch, ptxasStats, persistentRecurrences);
    if (*explain) return cmdExplain(file, fuser, backward, persistentRecurrences);
    if (*dot) return cmdDot(file, fuser, out);
    if (*stats) return cmdStats(file);
    if (*runCmd) return cmdRun(file, inputsDir, outDir, backward, gradDir, run);
    if (*check) return cmdCheck(file, run);
  } catch (const gj::Error& e) {
    std::cerr << "graphir: error: " << e.what() << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "graphir: error: out of memory; try smaller sizes\n";
    return 1;
  }
  return 0;
}
