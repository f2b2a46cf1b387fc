#pragma once
// graphbench's rows (internal to it): what each group (groups.cpp) is made of. A compiled row is a
// Function with the options' fuser and executor; a training row times the forward (gradients on) as fwd,
// and the backward plus, with `sgd`, an SGD update of the parameters as bwd.
#include "bench/groups.h"
#include "runtime/kernel_time.h"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace gj::bench {

/// Gradients of ones, on `like`'s device (so that a backward on CUDA copies nothing from the host).
Tensor ones(const Tensor& like);
bool onCuda(const Options& o);
/// The model's random inputs, on the device the rows run on (copied there once, outside the timed runs).
std::vector<Tensor> rowInputs(const Model& m, const Options& o);
/// w -= lr * g, in place (the parameters are contiguous graph inputs, owned by the row).
void sgdUpdate(const Tensor& w, const Tensor& g, double lr);
/// The given size, else the group's.
int64_t pick(const std::optional<int64_t>& given, int64_t fallback);

/// What fraction of the DRAM bandwidth `peakGBs` the timed kernels (`what`) reached (rows.cpp).
std::string bandwidthInfo(const std::vector<KernelTime>& times, double peakGBs,
                          std::string_view what = "fused kernel");

/// A model through a Function: forward with gradients on the inputs `wantsGrad` accepts (by name, all
/// when empty), then backward with gradients of ones and, when `sgd`, an update of those inputs.
Row trainingRow(const std::string& name, const Model& m, const Options& o, FunctionOptions fo, bool sgd,
                const std::function<bool(const std::string&)>& wantsGrad = {});
/// Forward only, no gradients (inference).
Row inferenceRow(const std::string& name, const Model& m, const Options& o, FunctionOptions fo);
/// The graph interpreted as written (loops kept, no optimization), with the autodiff tape.
Row interpretedRow(const std::string& name, const Model& m, const Options& o);
/// Eager kernels (no graph, no autograd): forward only.
Row eagerRow(const std::string& name, const Model& m, const Options& o, std::string info = "eager kernels");
/// The eager kernels on an autograd tape (models/eager.h), as nn.LSTM with cuDNN off.
Row eagerTrainingRow(const std::string& name, const Model& m, const Options& o);
/// The library's fused LSTM (oneDNN's on the CPU, cuDNN's on CUDA), forward and backward.
Row libraryLstmRow(const std::string& name, const LstmParams& p, const Options& o);
/// fastrnns' cudnn_layernorm: the library LSTM, then 3 x seqLength layer norms, forward only.
Row libraryLayerNormRow(const std::string& name, const LstmParams& p, const Options& o);

}  // namespace gj::bench
