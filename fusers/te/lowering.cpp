// Lowering a group (fusers/te/lowering.h): which nests it becomes and in what order. Each kind of nest is
// lowered in a file of its own under fusers/te/lowering/ (nests.h).
#include "fusers/te/lowering.h"

#include "fusers/te/lowering/nests.h"
#include "passes/util.h"

namespace gj::te {

LoopNest lowerGroup(const Graph& sub, LoweringOptions options) {
  using namespace lowering;
  Group group(sub);
  for (const Node* n : *sub.block())
    if (auto r = rowOp(n)) return rowGroup(group, *r);
  Values values(group);
  std::vector<Buf> outputs(sub.outputs().size());
  for (size_t k = 0; k < sub.outputs().size(); ++k) outputs[k] = group.outputBuf(k);
  const size_t groupOutputs = outputs.size();
  // Products first: the nests after them read their results as they read an input.
  const std::vector<Stmt> products = productNests(values, outputs);
  std::vector<Stmt> nests;
  std::vector<PointwiseStore> pointwise;
  std::vector<std::pair<const Value*, Slice>> reductions;  // built after every pointwise store is known
  for (size_t k = 0; k < groupOutputs; ++k) {
    const Value* out = sub.outputs()[k];
    const Node* n = out->node();
    if (n->kind() == OpKind::Mm) continue;  // its product nest stores it
    if (isTerminalReduction(n)) {
      reductions.push_back({out, {outputs[k], -1, 0}});
    } else if (n->kind() == OpKind::Softmax || n->kind() == OpKind::LogSoftmax) {
      nests.push_back(softmaxNest(values, out, outputs[k]));
    } else if (n->kind() == OpKind::Cat) {
      for (const auto& [part, slice] : catParts(n, outputs[k])) {
        if (isTerminalReduction(part->node())) reductions.push_back({part, slice});
        else pointwise.push_back({*staticSizes(part), slice, part});
      }
    } else {
      pointwise.push_back({outputs[k]->dims, {outputs[k], -1, 0}, out});
    }
  }
  std::unordered_map<const Value*, Slice> storedAt;  // read back by the reductions
  if (options.readBackOutputs)
    for (const PointwiseStore& p : pointwise) storedAt.emplace(p.value, p.to);
  for (const auto& [value, slice] : reductions) nests.push_back(reductionNest(values, value, slice, storedAt));
  // The pointwise nests, one per shape, ahead of the reductions, which may read their stores back.
  const std::vector<Stmt> pointwiseStores = pointwiseNests(values, pointwise);
  nests.insert(nests.begin(), pointwiseStores.begin(), pointwiseStores.end());
  nests.insert(nests.begin(), products.begin(), products.end());
  return LoopNest(Block::make(nests), group.inputs, outputs, outputs.size() - groupOutputs);
}

LoopNest cpuLoopNest(const Graph& sub, int64_t parallelGrain) {
  LoopNest nest = lowerGroup(sub, {.readBackOutputs = true});
  nest.interchangeStridedReductions();
  nest.lowerReductions();
  nest.scheduleCpu(parallelGrain);
  return nest;
}

void scheduleGpu(LoopNest& nest, const CudaLaunchOptions& launch, int64_t splitBlocks) {
  nest.scheduleGpu(launch.blockSize ? launch.blockSize : LoopNest::kGpuBlockSize,
                   launch.blockCount ? launch.blockCount : LoopNest::kGpuBlockCount,
                   launch.loopLevel ? launch.loopLevel : LoopNest::kGpuLoopLevel, splitBlocks);
}

LoopNest gpuLoopNest(const Graph& sub, const CudaLaunchOptions& launch, int64_t splitBlocks) {
  LoopNest nest = lowerGroup(sub);
  scheduleGpu(nest, launch, splitBlocks);  // lowers the reductions it does not give to a block
  return nest;
}

}  // namespace gj::te
