#pragma once
// LSTM models in the variants of PyTorch's fastrnns benchmark.
//
// Inputs (nn.LSTM's names and layouts): input [T, B, I], hx [L, B, H], cx [L, B, H], then for each layer k
// weight_ih_l{k} [4H, I or H], weight_hh_l{k} [4H, H], bias_ih_l{k} [4H], bias_hh_l{k} [4H].
// Outputs: output [T, B, H], hy [L, B, H], cy [L, B, H]; jit_simple returns hy and cy only.
//
// Note [Gate order]: gates are packed [i, f, g, o] along dim 0 of the weights (dim 1 of the gate
// matrix), as in nn.LSTM: i, f, o pass through sigmoid, g through tanh;
// c' = f * c + i * g, h' = o * tanh(c').
//
// The variants differ in where the input GEMM and the biases are computed:
//   jit              the cell inside a loop over time steps: two mm per step, both biases per step.
//   jit_premul       one matmul for all steps' input gates first; per step one mm and both biases.
//   jit_premul_bias  the input matmul and bias_ih for all steps first; per step one mm and bias_hh.
//   jit_simple       like jit, but returns only (hy, cy) and indexes the input per step.
//   jit_multilayer   like jit, with every layer's parameters gathered into one Tensor[] list.
#include "ir/builder.h"
#include "models/model.h"

#include <functional>
#include <string_view>

namespace gj {

enum class LstmVariantKind : uint8_t { Jit, JitPremul, JitPremulBias, JitSimple, JitMultilayer };

const std::vector<LstmVariantKind>& allLstmVariants();
std::string_view lstmVariantName(LstmVariantKind v);
/// Throws gj::Error listing the variants for an unknown name.
LstmVariantKind lstmVariantFromName(std::string_view name);

struct LstmParams {
  int64_t seqLength = 100, miniBatch = 64, inputSize = 512, hiddenSize = 512, numLayers = 1;
  /// nn.LSTM's dropout: in training, on every layer's output but the last's (prim::philox_dropout, stream =
  /// the layer's index). With dropout > 0 and two or more layers the graph takes one more input, `rng`: the
  /// generator's state, int64 [2] (seed, offset).
  double dropout = 0;
  bool hasDropout() const { return dropout > 0 && numLayers > 1; }
};

/// The LSTM as a graph. `prefix` is prepended to parameter names ("lstm." in the language model).
Model buildLstm(LstmVariantKind v, const LstmParams& p);
/// One cell: inputs input [B, I], hx, cx [B, H], weight_ih, weight_hh, bias_ih, bias_hh; outputs hy, cy.
Model buildLstmCell(int64_t miniBatch, int64_t inputSize, int64_t hiddenSize);

/// One step of the `jit` variant's cell: (hy, cy) from the step's input row x [B, I], h and c [B, H] and the
/// layer's weights (w_ih, w_hh, b_ih, b_hh): two mm, both biases, the gate math of Note [Gate order].
std::pair<Value*, Value*> emitLstmCell(GraphBuilder& b, Value* x, Value* h, Value* c, const std::vector<Value*>& w);

/// The LSTM layers inside a larger graph (language model, classifier): runs the variant's layers over
/// `input` [T, B, I] from hx, cx [L, B, H]; `weights` holds 4 values per layer (w_ih, w_hh, b_ih, b_hh).
/// With `rng`, every layer's output but the last's passes through dropout p (LstmParams::dropout).
struct LstmOutputs {
  Value* output;  ///< [T, B, H]; nullptr for jit_simple
  Value* hy;      ///< [L, B, H]
  Value* cy;      ///< [L, B, H]
};
LstmOutputs emitLstm(GraphBuilder& b, LstmVariantKind v, Value* input, Value* hx, Value* cx,
                     const std::vector<Value*>& weights, int64_t numLayers, Value* rng = nullptr, double dropout = 0);

/// One recurrent layer as a prim::Loop over `steps` [T, B, *] from (h0, c0): `cell` emits a step's (hy, cy)
/// from its input row, h and c. Returns (the stacked hy of every step [T, B, H], or nullptr without
/// needOutputs; the last hy; the last cy). indexDirectly selects each step from `steps` instead of
/// unbinding it first (jit_simple).
using CellEmitter = std::function<std::pair<Value*, Value*>(Value* xt, Value* h, Value* c)>;
std::tuple<Value*, Value*, Value*> emitRecurrence(GraphBuilder& b, Value* steps, Value* h0, Value* c0, bool needOutputs,
                                                  bool indexDirectly, const CellEmitter& cell);

/// The eager LSTM (runtime kernels, no graph) on nn.LSTM-layout tensors; returns output, hy, cy.
std::vector<Tensor> eagerLstm(const Tensor& input, const Tensor& hx, const Tensor& cx,
                              const std::vector<Tensor>& weights, int64_t numLayers);
/// The same on an eager autograd tape: `in` holds input, hx, cx, then 4 weights per layer (then rng, with
/// dropout > 0 and two or more layers).
std::vector<eager::Var> eagerLstm(eager::Tape& tape, const std::vector<eager::Var>& in, int64_t numLayers,
                                  double dropout = 0);
/// Stacked recurrent layers on a tape: `in` holds input, hx, cx, then `perLayer` parameters a layer, the
/// first two weight_ih and weight_hh (transposed once a layer); `cell` runs one step from them and all of
/// the layer's parameters. With dropout > 0, `in` ends with the rng state and every layer's output but the
/// last's passes through dropout (as emitLstm's). Returns output, hy, cy.
using EagerCell = std::function<std::pair<eager::Var, eager::Var>(
    const eager::Var& x, const eager::Var& h, const eager::Var& c, const eager::Var& wihT, const eager::Var& whhT,
    const eager::Var* params)>;
std::vector<eager::Var> eagerLayers(eager::Tape& tape, const std::vector<eager::Var>& in, int64_t numLayers,
                                    size_t perLayer, const EagerCell& cell, double dropout = 0);
/// One eager cell step from the transposed weights; returns (hy, cy).
std::pair<eager::Var, eager::Var> eagerLstmCell(eager::Tape& tape, const eager::Var& x, const eager::Var& h,
                                                const eager::Var& c, const eager::Var& wihT, const eager::Var& whhT,
                                                const eager::Var& bih, const eager::Var& bhh);
/// The values of an eager model run on a tape that records nothing (no input requires grad).
std::vector<Tensor> eagerValues(const std::function<std::vector<eager::Var>(eager::Tape&, const std::vector<eager::Var>&)>& f,
                                const std::vector<Tensor>& in);

/// Input specs of an LSTM's parameters, `prefix` before each name.
std::vector<InputSpec> lstmWeightSpecs(int64_t inputSize, int64_t hiddenSize, int64_t numLayers,
                                       const std::string& prefix = "");

}  // namespace gj
