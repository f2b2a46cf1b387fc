#include "bench/timing.h"

#include "runtime/allocator.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace gj::bench {

Stats summarize(std::vector<double> samples) {
  Stats s;
  s.samplesMs = samples;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  size_t n = samples.size();
  s.medianMs = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  double mean = 0;
  for (double x : samples) mean += x;
  mean /= static_cast<double>(n);
  double var = 0;
  for (double x : samples) var += (x - mean) * (x - mean);
  s.stdMs = std::sqrt(var / static_cast<double>(n));
  return s;
}

RowTiming timeRow(const std::function<void()>& fwd, const std::function<void()>& bwd, int warmup, int loops) {
  auto ms = [](auto t0, auto t1) { return std::chrono::duration<double, std::milli>(t1 - t0).count(); };
  for (int i = 0; i < warmup; ++i) {
    fwd();
    if (bwd) bwd();
  }
  std::vector<double> f, b;
  const size_t before = cpuMemoryStats().currentBytes;
  resetCpuPeak();
  for (int i = 0; i < loops; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    fwd();
    auto t1 = std::chrono::steady_clock::now();
    f.push_back(ms(t0, t1));
    if (!bwd) continue;
    bwd();
    b.push_back(ms(t1, std::chrono::steady_clock::now()));
  }
  const size_t peak = cpuMemoryStats().peakBytes;
  return {summarize(std::move(f)), summarize(std::move(b)), peak > before ? peak - before : 0};
}

std::string formatTable(const std::vector<std::vector<std::string>>& rows, const std::string& sep) {
  std::vector<size_t> width;
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) {
      if (width.size() <= i) width.push_back(16);
      width[i] = std::max(width[i], row[i].size());
    }
  std::string out;
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) out += (i ? sep : "") + fmt::format("{:>{}}", row[i], width[i]);
    out += "\n";
  }
  return out;
}

}  // namespace gj::bench
