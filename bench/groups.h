#pragma once
// graphbench's benchmark groups: each builds its rows (a forward closure, a backward closure, an info
// line) from the options. A size option given on the command line overrides every group's own default
// for that size (so tests run every group small); without it each group uses its documented sizes.
#include "executors/function.h"
#include "models/lstm.h"
#include "runtime/library_lstm.h"

#include <cstdint>
#include <memory>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gj::bench {

/// A compiled row's fuser and executor.
using FuserExecutor = std::pair<FuserKind, ExecutorKind>;
/// "te/profiling": a compiled row's name suffix when graphbench compares several pairs.
std::string pairName(const FuserExecutor& p);

struct Options {
  FuserKind fuser = FuserKind::None;
  ExecutorKind executor = ExecutorKind::Profiling;
  std::string device = "cpu";
  std::vector<std::string> groups = {"rnns"};
  std::vector<std::string> rnns;
  std::optional<int64_t> seqLength, numLayers, inputSize, hiddenSize, miniBatch, vocab, imageSize;
  std::optional<int> nloops, warmup;
  int threads = 0, profilingRuns = 1;
  uint64_t seed = 0;
  std::string sep = " ", jsonPath, plotPath;
  /// --print-json: fastrnns' forms on standard output, "oss" or "pep" (the tables go to standard error).
  std::string printJson;
  double learningRate = 0.01;
  /// --device=cuda: replay each row's forward and backward as CUDA graphs after its warm-up runs.
  bool cudaGraphs = false;
  /// --device=cuda: --cuda-pointwise-block-size, -block-count and -loop-level for the fused kernels
  /// (FunctionOptions::fuserOptions.cudaLaunch; 0: the fuser's own choice).
  int64_t cudaBlockSize = 0, cudaBlockCount = 0;
  int cudaLoopLevel = 0;
  /// --device=cuda --kernel-bandwidth: every fused kernel launch timed by events (FunctionOptions::
  /// timeKernels), and the info column says what fraction of the device's DRAM bandwidth they reached.
  bool kernelBandwidth = false;
};

/// A timed row. `backward` runs after `forward` (which records gradients); empty when the row has none.
/// `info` is read after timing (compile time, groups, guard failures...).
struct Row {
  std::string name;
  std::function<void()> forward;
  std::function<void()> backward;
  std::function<std::string()> info;
  std::string baseline;  ///< a row of the same group this one is compared with ("slower by"), or empty
  /// The fuser and executor of a compiled row (a Function with the options' fuser and executor); empty on
  /// every other row. graphbench builds a compiled row once per fuser x executor it is asked to compare.
  std::optional<FuserExecutor> pair{};
  bool compiled() const { return pair.has_value(); }
};

/// A size a group uses: one value, or the values it sweeps (`sweep`: the rows take each in turn).
struct GroupSize {
  std::string name;
  std::vector<int64_t> values;
  bool sweep = false;
};

/// A group: its rows, a line saying the sizes it uses, and the same sizes for scripts (the JSON).
struct Group {
  std::string title;
  std::vector<Row> rows;
  std::vector<GroupSize> sizes;
  int nloops = 20, warmup = 3;  ///< the group's defaults; --nloops / --warmup override them
};

const std::vector<std::string>& groupNames();  ///< rnns, vl_lstm, cnns, lm, classifier, cells, ops
/// The rnns rows a run without --rnns times: fastrnns' eight defaults.
const std::vector<std::string>& defaultRnnRowNames();
/// Every row --rnns accepts: the defaults, then the layer-norm rows (cudnn_layernorm is forward only) and
/// the dropout rows.
const std::vector<std::string>& rnnRowNames();
/// fastrnns' dropout between layers for cudnn_dropout and jit_dropout (in training; none with one layer).
constexpr double kRnnsDropout = 0.4;
/// The rnns group's sizes (the options' or fastrnns' defaults); row `row`'s (its dropout); and the model rnns
/// row `row` runs (the library rows, aten and py: the jit LSTM's).
LstmParams rnnsParams(const Options& o);
LstmParams rnnsRowParams(const std::string& row, LstmParams p);
Model rnnsModel(const std::string& row, const LstmParams& p);
/// The vl_lstm group (fastrnns' --variable-lstms): vl_cudnn, vl_jit, vl_py, then graphjit's vl_packed.
const std::vector<std::string>& vlRowNames();
/// fastrnns' varlen_lstm_inputs: lengths drawn in [kVlMinLength, kVlMaxLength) per sequence, each input
/// padded to kVlMaxLength - 1 steps (so every set of lengths has one shape).
constexpr int64_t kVlMinLength = 30, kVlMaxLength = 100;
/// The model vl row `row` runs (vl_jit and vl_py: the per-sequence loop; vl_cudnn and vl_packed: the packed
/// graph) at the options' sizes, its lengths input's range fastrnns' (randomInputs draws them there).
Model vlModel(const std::string& row, const Options& o);
/// vl_cudnn: the library LSTM over the packed batch, as PyTorch's packed sequences run it: the batch sorted
/// by length, then one library LSTM per run of steps over which no sequence ends (its batch the sequences
/// still running), each starting from the state the last one left.
class PackedLibraryLstm {
 public:
  PackedLibraryLstm(const std::vector<int64_t>& lengths, const LstmParams& p, const Options& o);
  /// input [T, B, I], hx, cx, weights as LibraryLstm's; returns output (zero past each length), hy, cy.
  std::vector<Tensor> forward(const Tensor& input, const Tensor& hx, const Tensor& cx, const std::vector<Tensor>& w);
  /// Gradients of input, hx, cx and the weights (LibraryLstm's order).
  std::vector<Tensor> backward(const Tensor& gradOutput, const Tensor& gradHy, const Tensor& gradCy);
  size_t segments() const { return segments_.size(); }

 private:
  struct Segment {
    int64_t begin, end, batch;
    std::shared_ptr<LibraryLstm> lstm;
  };
  std::vector<Segment> segments_;
  Tensor order_, unsort_;
  Shape inputSizes_;
};
/// The cnns group (fastrnns' --group cnns): resnet18, resnet18_jit, resnet50, resnet50_jit; each ResNet in
/// training on miniBatch x 3 x imageSize x imageSize (defaults fastrnns': 64 and 224), torchvision's 1000 classes.
const std::vector<std::string>& cnnRowNames();
/// The eager row a cnns row is measured and checked against (resnet18_jit: resnet18; an eager row: itself).
std::string cnnEagerRow(const std::string& row);
/// The ResNet a cnns row runs at the options' sizes (resnet18_jit: resnet18's).
Model cnnModel(const std::string& row, const Options& o);
/// What the rows are made of (also for --check, check.h): a compiled row's Function options; the library
/// LSTM on the options' device (oneDNN's on the CPU, cuDNN's on CUDA), its name, or why there is none ("").
FunctionOptions functionOptions(const Options& o);
/// functionOptions(o) for an rnns row: jit_persistent's recurrences as persistent kernels (device cuda only,
/// else a gj::Error).
FunctionOptions rnnsFunctionOptions(const std::string& row, const Options& o);
/// With p.hasDropout(), one library LSTM a layer and the runtime's dropout between them, drawing from `rng`.
std::shared_ptr<LibraryLstm> newLibraryLstm(const LstmParams& p, const Options& o, const Tensor& rng = {});
const char* libraryLstmName(const Options& o);
std::string noLibraryLstm(const Options& o);

/// Builds group `name`'s rows; gj::Error for an unknown name.
Group buildGroup(const std::string& name, const Options& o);

}  // namespace gj::bench
