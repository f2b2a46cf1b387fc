#pragma once
// Timing helpers for graphbench: warm-up excluded, median and standard deviation over the timed runs.
#include <functional>
#include <string>
#include <vector>

namespace gj::bench {

struct Stats {
  double medianMs = 0, stdMs = 0;
  std::vector<double> samplesMs;
};

/// Runs fwd then bwd (when given) `warmup` times untimed, then `loops` times, timing each separately.
std::pair<Stats, Stats> timeRow(const std::function<void()>& fwd, const std::function<void()>& bwd, int warmup,
                                int loops);
/// Summary of samples (ms): median and population standard deviation.
Stats summarize(std::vector<double> samplesMs);
/// Right-aligns each cell to 16 characters (the fastrnns layout) and joins them with `sep`.
std::string formatRow(const std::vector<std::string>& cells, const std::string& sep);

}  // namespace gj::bench
