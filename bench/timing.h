#pragma once
// Timing helpers for graphbench: warm-up excluded, median and standard deviation over the timed runs.
#include "bench/groups.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gj::bench {

struct Stats {
  double medianMs = 0, stdMs = 0;
  /// How well the samples pin the median: the width of its 95% confidence interval (between the order
  /// statistics that bound it, whatever the distribution) over the median. 0.5 is about +-25%.
  double medianUncertainty = 0;
  std::vector<double> samplesMs;
};

struct RowTiming {
  Stats fwd, bwd;
  /// The most tensor memory held during the timed runs beyond what was held before them (the
  /// training step's own memory: activations saved for backward, gradients, temporaries).
  size_t peakBytes = 0;
  /// Timed runs during which this process's threads spent more than a tenth of the run's time runnable
  /// but waiting for a CPU (summed over threads): other processes held the cores. nullopt where the kernel
  /// does not say. Read between runs, outside the timed intervals.
  std::optional<int> starvedRuns;
  int runs = 0;
};

/// Runs fwd then bwd (when given) `warmup` times untimed, then `loops` times, timing each separately.
RowTiming timeRow(const std::function<void()>& fwd, const std::function<void()>& bwd, int warmup, int loops);
/// Times every row. One after another by default (each row's warm-up, then its timed runs); with
/// `interleave`, every row is warmed up first and then each of the `loops` rounds runs every row once, so
/// that a noisy machine's slow minutes fall on all rows alike. `onProgress(done, total)` is called before
/// each step (a row, or a round when interleaving). When interleaving, `afterWarmUp` (when given) runs
/// once between the warm-up and the first round, and `afterRound` after each round, both untimed
/// (graphbench's GEMM floors: the rows' products recorded, then timed a round at a time).
std::vector<RowTiming> timeRows(const std::vector<Row>& rows, int warmup, int loops, bool interleave,
                                const std::function<void(size_t, size_t)>& onProgress,
                                const std::function<void()>& afterWarmUp = {},
                                const std::function<void()>& afterRound = {});
/// Summary of samples (ms): median and population standard deviation.
Stats summarize(std::vector<double> samplesMs);
/// Right-aligns each cell to 16 characters (the fastrnns layout), or to its column's longest cell when
/// longer, and joins them with `sep`; one line per row. A `sep` with other characters than spaces (',')
/// makes a delimited table instead: no padding, cells quoted as CSV quotes them.
std::string formatTable(const std::vector<std::vector<std::string>>& rows, const std::string& sep);

}  // namespace gj::bench
