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
/// Right-aligns each cell to 16 characters (the fastrnns layout), or to its column's longest cell when
/// longer, and joins them with `sep`; one line per row.
std::string formatTable(const std::vector<std::vector<std::string>>& rows, const std::string& sep);

}  // namespace gj::bench
