// graphir: the commands that show what the compiler does to a graph.
#include "executors/pipeline.h"
#include "fusers/recurrence.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "passes/frontend.h"
#include "passes/shape_propagation.h"
#include "runtime/npy.h"
#include "runtime/nvrtc.h"
#include "passes/util.h"
#include "tools/graphir.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>

namespace fs = std::filesystem;

namespace gj::tools {

void writeText(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::cout << text;
    return;
  }
  std::ofstream out(path);
  if (!out.good())
    throw Error(fmt::format("cannot write '{}': {}", path, std::strerror(errno)), "",
                "give a path in a folder that exists and where you may write");
  out << text;
  out.close();
  USER_CHECK(out.good(), "error writing '{}': {} (a full disk?)", path, std::strerror(errno));
}

int cmdDump(const std::string& file, bool types, bool torchscript) {
  auto g = loadIR(file, Form::AsWritten);
  if (types) propagateShapes(*g);
  if (torchscript) exportTorchScript(*g);
  std::cout << printIR(*g);
  return 0;
}

int cmdOps() {
  for (const OpInfo& op : allOps())
    // TorchScript's own ops are read from its text but lowered before anything runs (docs/torchscript.md)
    std::cout << fmt::format("{:<32} {:<10} {}\n", op.name, op.frontendOnly() ? "frontend" : opGroupName(op.group),
                             op.schema);
  return 0;
}

int cmdModel(const std::string& name, const ModelConfig& cfg, const std::string& out, bool torchscript,
             const std::string& inputsDir) {
  Model m = buildModel(name, cfg);
  if (torchscript) exportTorchScript(*m.graph);
  writeText(out, printIR(*m.graph));
  if (inputsDir.empty()) return 0;
  makeFolder(inputsDir, "inputs");
  const std::vector<Tensor> inputs = randomInputs(m, 0);
  for (size_t i = 0; i < inputs.size(); ++i)
    writeNpy((fs::path(inputsDir) / (m.inputs[i].name + ".npy")).string(), inputs[i]);
  return 0;
}

static PipelineOptions pipelineOptions(FuserKind fuser, bool printAfterAll) {
  PipelineOptions o;
  o.fuser = fuser;
  o.passes = PassOptions::fromEnvironment();
  o.passes.verifyEach = true;
  if (printAfterAll) {
    o.passes.logAfter = {"all"};
    o.passes.log = &std::cout;
  }
  return o;
}

// The file's graph through an executor's pipeline, specialized to its declared types; with `backward`,
// every floating-point input requires grad, so the plan holds each differentiable subgraph's forward and
// backward graphs.
static Plan optimizedPlan(const std::string& file, ExecutorKind pipeline, FuserKind fuser,
                          bool printAfterAll = false, bool backward = false) {
  std::shared_ptr<Graph> g = loadIR(file, Form::Lowered);
  for (Value* in : g->inputs())
    USER_CHECK(!in->type().isTensor() || in->type().isComplete(),
               "{}: input %{} has type {}; the pipelines specialize on complete types such as Float(3, 4)", file,
               in->name(), in->type().str());
  std::vector<bool> rg;
  for (const Value* in : g->inputs()) rg.push_back(backward && in->type().isTensor() && isFloating(*in->type().dtype));
  if (pipeline == ExecutorKind::Profiling) g = buildGuardedGraph(*g, {}, rg);
  return optimizeSpecialized(g, rg, pipelineOptions(fuser, printAfterAll));
}

int cmdPasses(const std::string& file, const std::string& passList, std::optional<ExecutorKind> pipeline,
              bool printAfterAll, bool time) {
  std::vector<PassRecord> records;
  std::string result;
  if (pipeline) {
    USER_CHECK(passList.empty(), "give --passes or --pipeline, not both");
    Plan p = optimizedPlan(file, *pipeline, FuserKind::None, printAfterAll);
    records = p.passes;
    result = printIR(*p.graph);
  } else {
    auto g = loadIR(file, Form::AsWritten);
    PassOptions opts = PassOptions::fromEnvironment();
    opts.verifyEach = true;
    opts.log = &std::cout;
    if (printAfterAll) opts.logAfter = {"all"};
    records = runPasses(*g, parsePassList(passList), opts);
    result = printIR(*g);
  }
  if (!printAfterAll || pipeline) std::cout << result;
  if (time) {
    std::cerr << fmt::format("{:<28} {:>9} {:>10}\n", "pass", "changed", "ms");
    for (const PassRecord& r : records) std::cerr << fmt::format("{:<28} {:>9} {:>10.3f}\n", r.name, r.changed, r.ms);
  }
  return 0;
}

// The plan's graphs with a title each: the top graph, then every differentiable subgraph's forward and
// backward graphs (in the top graph's order).
static std::vector<std::pair<std::string, const Graph*>> planGraphs(const Plan& p) {
  std::vector<std::pair<std::string, const Graph*>> out = {{"graph", p.graph.get()}};
  int k = 0;
  forEachNode(p.graph->block(), [&](Node* n) {
    auto it = p.gradients.find(n);
    if (it == p.gradients.end()) return;
    out.emplace_back(fmt::format("forward of {}_{}", n->info().name, k), it->second->forward.get());
    out.emplace_back(fmt::format("backward of {}_{}", n->info().name, k), it->second->backward.get());
    ++k;
  });
  return out;
}

static bool isGroup(const Node* n) { return isFusionGroupOp(n->kind()); }

// A copy of one of the plan's graphs, as fused here, with the recurrences a CUDA plan would run as one kernel
// each (fusers/recurrence.h), and the step's report of them.
struct PersistentCopy {
  std::string title;
  std::unique_ptr<Graph> graph;
  RecurrenceReport report;
};

static std::vector<PersistentCopy> persistentCopies(const Plan& p, const Fuser& f) {
  std::vector<PersistentCopy> copies;
  for (const auto& [title, g] : planGraphs(p)) {
    std::unique_ptr<Graph> copy = g->clone();
    RecurrenceReport r = formRecurrences(*copy, f.groupOp(), recurrenceWeightBudget());
    copies.push_back({title, std::move(copy), std::move(r)});
  }
  return copies;
}

int cmdFuse(const std::string& file, FuserKind fuser, bool backward) {
  Plan p = optimizedPlan(file, ExecutorKind::Legacy, fuser, false, backward);
  size_t groups = 0;
  auto graphs = planGraphs(p);
  for (const auto& [title, g] : graphs) {
    if (graphs.size() > 1) std::cout << "# " << title << "\n";
    std::cout << printIR(*g);
    forEachNode(g->block(), [&](Node* n) { groups += isGroup(n); });
  }
  std::cerr << fmt::format("{} fusion group(s), {} compiled, {:.1f} ms\n", groups, p.fusion.kernelsCompiled,
                           p.fusion.compileMs);
  for (const std::string& w : p.fusion.warnings) std::cerr << "warning: " << w << "\n";
  return 0;
}

// An H100's multiprocessors: the device --stats counts launches for (no GPU needed).
constexpr int kH100Multiprocessors = 132;

int cmdCodegen(const std::string& file, FuserKind fuser, const std::string& target, const std::string& outDir,
               bool backward, const CudaLaunchOptions& launch, bool stats, bool persistent) {
  USER_CHECK(target == "cpu" || target == "cuda", "unknown target '{}'; targets: cpu, cuda", target);
  USER_CHECK(!stats || target == "cuda", "--stats reports ptxas' resources of CUDA kernels: add --target cuda");
  USER_CHECK(!persistent || (target == "cuda" && outDir.empty()),
             "--persistent-recurrences prints CUDA kernels to standard output: add --target cuda, without -o");
  USER_CHECK(!stats || haveNvrtc(), "--stats needs NVRTC, which this build lacks (configured with GJ_WITH_CUDA=OFF)");
  USER_CHECK(launch.isDefault() || target == "cuda", "--cuda-pointwise-* ({}) apply to --target cuda only",
             launch.str());
  launch.validate();
  Plan p = optimizedPlan(file, ExecutorKind::Legacy, fuser, false, backward);
  if (!outDir.empty()) makeFolder(outDir, "codegen output");
  // The fuser itself writes each group's code, as it does when it compiles the group.
  std::unique_ptr<Fuser> f =
      makeFuser(fuser, {.device = target == "cuda" ? DeviceKind::Cuda : DeviceKind::Cpu, .cudaLaunch = launch});
  int k = 0, entries = 0, spilled = 0;
  // ptxas' report of a kernel for sm_90, a line per entry, after which `each` may print more of the entry.
  auto ptxas = [&](const std::string& code, const std::string& name,
                   const std::function<void(const KernelResources&)>& each) {
    auto usage = nvrtcResourceUsage(code, name, "sm_90");
    USER_CHECK(usage.ok(), "{} did not compile for sm_90: {}", name, usage.ok() ? "" : usage.error().what());
    for (const KernelResources& r : usage.value()) {
      std::cout << fmt::format("// ptxas sm_90 {}: {}\n", r.entry, r.str());
      each(r);
      spilled += r.spillStoreBytes + r.spillLoadBytes > 0;
      ++entries;
    }
  };
  for (const auto& [title, g] : planGraphs(p)) forEachNode(g->block(), [&](Node* n) {
    if (!isGroup(n)) return;
    std::string name = fmt::format("fusion_group_{}", k++);
    std::string code = f->emit(n, name);
    if (outDir.empty()) {
      std::cout << "// " << name << "\n" << code << "\n";
    } else {
      std::string path = (fs::path(outDir) / (name + (target == "cuda" ? ".cu" : ".ll"))).string();
      writeText(path, code);
      std::cout << "wrote " << path << "\n";
    }
    if (!stats) return;
    const KernelCost cost = f->cost(n, kH100Multiprocessors);
    ptxas(code, name, [&](const KernelResources& r) {
      const int64_t bytes = cost.bytesRead + cost.bytesWritten;
      std::cout << fmt::format("// cost {}: {} {} of {} threads, occupancy {:.0f} % on sm_90; reads {} B, "
                               "writes {} B, {} FLOPs ({:.2f} a byte)\n", r.entry, cost.blocks,
                               cost.blocks == 1 ? "block" : "blocks", cost.threadsPerBlock,
                               100 * sm90Occupancy(r, cost.threadsPerBlock), cost.bytesRead, cost.bytesWritten,
                               cost.flops, bytes ? static_cast<double>(cost.flops) / static_cast<double>(bytes) : 0.0);
    });
  });
  if (persistent) {
    int r = 0;
    for (const PersistentCopy& c : persistentCopies(p, *f))
      forEachNode(c.graph->block(), [&](Node* n) {
        if (n->kind() != OpKind::RecurrenceGroup) return;
        std::string name = fmt::format("persistent_recurrence_{}", r++);
        std::string code = emitRecurrence(n, *f, name);
        std::cout << "// " << name << " (" << c.title << ")\n" << code << "\n";
        if (stats) ptxas(code, name, [](const KernelResources&) {});
      });
    if (r == 0) std::cerr << "no persistent recurrences in " << file << "\n";
  }
  if (k == 0) std::cerr << "no fusion groups in " << file << "\n";
  if (stats) std::cerr << fmt::format("{} kernel(s) compiled for sm_90, {} with spills\n", entries, spilled);
  return 0;
}

int cmdExplain(const std::string& file, FuserKind fuser, bool backward, bool persistent) {
  Plan p = optimizedPlan(file, ExecutorKind::Legacy, fuser, false, backward);
  std::unique_ptr<Fuser> f = makeFuser(fuser, {});
  int outside = 0;
  for (const auto& [title, g] : planGraphs(p)) {
    std::string section;
    forEachNode(g->block(), [&](Node* n) {
      if (isPlumbing(n->kind()) || isGroup(n)) return;
      section += fmt::format("{}\n    {}\n", printNode(n), f->whyNotFused(n));
      ++outside;
    });
    if (!section.empty()) std::cout << fmt::format("# {}\n{}", title, section);
  }
  if (persistent)
    for (const PersistentCopy& c : persistentCopies(p, *f)) {
      if (c.report.lines.empty()) continue;
      std::cout << fmt::format("# persistent recurrences of {}\n", c.title);
      for (const std::string& line : c.report.lines) std::cout << "    " << line << "\n";
    }
  std::cerr << fmt::format("{} op(s) outside the {} fuser's groups\n", outside, fuserName(fuser));
  return 0;
}

// Graphviz: one box per op, fusion groups as clusters of their ops.
static std::string dotText(const Graph& g) {
  std::string s = "digraph graphjit {\n  rankdir=TB;\n  node [shape=box, fontname=monospace, fontsize=10];\n";
  std::map<const Value*, std::string> src;
  for (const Value* in : g.inputs()) {
    std::string id = fmt::format("in_{}", in->id());
    s += fmt::format("  {} [label=\"%{}\\n{}\", shape=ellipse];\n", id, in->name(), in->type().str());
    src[in] = id;
  }
  int cluster = 0;
  auto nodeLine = [&](const Node* n, const std::string& id, const std::string& indent) {
    s += fmt::format("{}{} [label=\"{}\"];\n", indent, id, n->info().name);
    for (const Value* v : n->outputs()) src[v] = id;
  };
  auto edges = [&](const Node* n, const std::string& id, const std::map<const Value*, std::string>& from) {
    for (const Value* v : n->inputs())
      if (auto it = from.find(v); it != from.end() && v->type().kind != TypeKind::Int && !isConstant(v))
        s += fmt::format("  {} -> {};\n", it->second, id);
  };
  for (const Node* n : *g.block()) {
    if (n->kind() == OpKind::Constant) continue;
    std::string id = fmt::format("n{}", n->outputs().empty() ? 0 : n->output()->id());
    if (!isGroup(n) || !n->subgraph()) {
      nodeLine(n, id, "  ");
      edges(n, id, src);
      continue;
    }
    // A cluster with the group's ops; the group's inputs feed its first ops, its outputs leave its last.
    s += fmt::format("  subgraph cluster_{} {{\n    label=\"{}_{}\"; style=filled; color=lightblue;\n",
                     cluster, n->info().name, cluster);
    const Graph& sub = *n->subgraph();
    std::map<const Value*, std::string> inner;
    for (size_t i = 0; i < sub.inputs().size(); ++i) inner[sub.inputs()[i]] = src.at(n->input(i));
    int k = 0;
    for (const Node* m : *sub.block()) {
      if (m->kind() == OpKind::Constant) continue;
      std::string mid = fmt::format("g{}_{}", cluster, k++);
      s += fmt::format("    {} [label=\"{}\"];\n", mid, m->info().name);
      for (const Value* v : m->outputs()) inner[v] = mid;
      edges(m, mid, inner);
    }
    s += "  }\n";
    for (size_t i = 0; i < n->outputs().size(); ++i) src[n->output(i)] = inner.at(sub.outputs()[i]);
    ++cluster;
  }
  for (size_t i = 0; i < g.outputs().size(); ++i)
    if (auto it = src.find(g.outputs()[i]); it != src.end())
      s += fmt::format("  out_{} [label=\"return {}\", shape=ellipse];\n  {} -> out_{};\n", i, i, it->second, i);
  return s + "}\n";
}

int cmdDot(const std::string& file, FuserKind fuser, const std::string& out) {
  std::shared_ptr<Graph> g;
  if (fuser == FuserKind::None) {
    g = loadIR(file, Form::AsWritten);
  } else {
    g = optimizedPlan(file, ExecutorKind::Legacy, fuser).graph;
  }
  std::string text = dotText(*g);
  std::string ext = fs::path(out).extension().string();
  if (out.empty() || ext == ".dot" || out == "-") {
    writeText(out, text);
    return 0;
  }
  USER_CHECK(ext == ".svg" || ext == ".png", "graphir dot writes .dot, .svg or .png, not '{}'", ext);
  std::string dotFile = out + ".dot";
  writeText(dotFile, text);
  auto quoted = [](const std::string& path) {  // for the shell, inside single quotes
    std::string q = "'";
    for (char c : path) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  };
  std::string cmd = fmt::format("dot -T{} {} -o {} 2>/dev/null", ext.substr(1), quoted(dotFile), quoted(out));
  int rc = std::system(cmd.c_str());
  std::error_code ignored;
  fs::remove(dotFile, ignored);
  USER_CHECK(rc == 0, "rendering {} needs Graphviz's dot (apt-get install graphviz); or write a .dot file", out);
  return 0;
}

int cmdStats(const std::string& file) {
  auto g = loadIR(file, Form::AsWritten);
  std::map<std::string, int> byOp;
  int nodes = 0, loops = 0, blocks = 0, depth = 0;
  std::function<void(const Block*, int)> walk = [&](const Block* b, int d) {
    depth = std::max(depth, d);
    for (const Node* n : *b) {
      ++nodes;
      ++byOp[std::string(n->info().name)];
      loops += n->kind() == OpKind::Loop;
      for (const Block* inner : n->blocks()) {
        ++blocks;
        walk(inner, d + 1);
      }
    }
  };
  walk(g->block(), 0);
  std::cout << fmt::format("inputs {}, outputs {}, nodes {}, values {}, loops {}, nested blocks {}, depth {}\n",
                           g->inputs().size(), g->outputs().size(), nodes, g->numValueIds(), loops, blocks, depth);
  for (const auto& [op, n] : byOp) std::cout << fmt::format("  {:<32} {}\n", op, n);
  return 0;
}

}  // namespace gj::tools
