#include "bench/timing.h"

#include "bench/machine.h"
#include "runtime/allocator.h"
#include "runtime/cuda/device.h"

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
  // The median's 95% interval lies between the order statistics n/2 -+ 1.96 sqrt(n)/2 (the binomial
  // count of samples below the median, in its normal approximation).
  const double half = 0.98 * std::sqrt(static_cast<double>(n));
  const auto lo = static_cast<size_t>(std::max(0.0, std::floor(n / 2.0 - half)));
  const auto hi = std::min(n - 1, static_cast<size_t>(std::ceil(n / 2.0 + half)));
  if (s.medianMs > 0) s.medianUncertainty = (samples[hi] - samples[lo]) / s.medianMs;
  return s;
}

namespace {

// The samples of one row so far, with the run-queue wait and the time of its timed runs.
struct Samples {
  std::vector<double> fwd, bwd;
  size_t peakBytes = 0;
  int starvedRuns = 0;
  bool waitKnown = true;
};

// A run counts as starved when its threads waited for a CPU more than this share of its time.
constexpr double kStarvedWait = 0.10;

// One timed run: forward, then backward when there is one; the peak counts what this run allocated
// beyond what was held when it started, host and device memory together.
void timeOnce(const std::function<void()>& fwd, const std::function<void()>& bwd, Samples& s) {
  auto ms = [](auto t0, auto t1) { return std::chrono::duration<double, std::milli>(t1 - t0).count(); };
  const size_t before = cpuMemoryStats().currentBytes, deviceBefore = cuda::deviceMemoryStats().currentBytes;
  resetCpuPeak();
  cuda::resetDevicePeak();
  const std::optional<uint64_t> wait0 = runQueueWaitNs();
  auto t0 = std::chrono::steady_clock::now();
  fwd();
  auto t1 = std::chrono::steady_clock::now();
  s.fwd.push_back(ms(t0, t1));
  auto t2 = t1;
  if (bwd) {
    bwd();
    t2 = std::chrono::steady_clock::now();
    s.bwd.push_back(ms(t1, t2));
  }
  const std::optional<uint64_t> wait1 = runQueueWaitNs();
  if (wait0 && wait1 && *wait1 >= *wait0)
    s.starvedRuns += static_cast<double>(*wait1 - *wait0) / 1e6 > kStarvedWait * ms(t0, t2);
  else
    s.waitKnown = false;
  const size_t peak = cpuMemoryStats().peakBytes, devicePeak = cuda::deviceMemoryStats().peakBytes;
  const size_t grew = (peak > before ? peak - before : 0) + (devicePeak > deviceBefore ? devicePeak - deviceBefore : 0);
  s.peakBytes = std::max(s.peakBytes, grew);
}

void warmUp(const std::function<void()>& fwd, const std::function<void()>& bwd, int warmup) {
  for (int i = 0; i < warmup; ++i) {
    fwd();
    if (bwd) bwd();
  }
}

RowTiming finish(Samples s) {
  const int runs = static_cast<int>(s.fwd.size());
  RowTiming t{summarize(std::move(s.fwd)), summarize(std::move(s.bwd)), s.peakBytes, std::nullopt, runs};
  if (s.waitKnown) t.starvedRuns = s.starvedRuns;
  return t;
}

}  // namespace

RowTiming timeRow(const std::function<void()>& fwd, const std::function<void()>& bwd, int warmup, int loops) {
  warmUp(fwd, bwd, warmup);
  Samples s;
  for (int i = 0; i < loops; ++i) timeOnce(fwd, bwd, s);
  return finish(std::move(s));
}

std::vector<RowTiming> timeRows(const std::vector<Row>& rows, int warmup, int loops, bool interleave,
                                const std::function<void(size_t, size_t)>& onProgress,
                                const std::function<void()>& afterWarmUp, const std::function<void()>& afterRound) {
  std::vector<RowTiming> out;
  if (!interleave) {
    for (size_t i = 0; i < rows.size(); ++i) {
      onProgress(i, rows.size());
      out.push_back(timeRow(rows[i].forward, rows[i].backward, warmup, loops));
    }
    return out;
  }
  const size_t steps = rows.size() + static_cast<size_t>(loops);
  for (size_t i = 0; i < rows.size(); ++i) {
    onProgress(i, steps);
    warmUp(rows[i].forward, rows[i].backward, warmup);
  }
  if (afterWarmUp) afterWarmUp();
  std::vector<Samples> samples(rows.size());
  for (int round = 0; round < loops; ++round) {
    onProgress(rows.size() + static_cast<size_t>(round), steps);
    for (size_t i = 0; i < rows.size(); ++i) timeOnce(rows[i].forward, rows[i].backward, samples[i]);
    if (afterRound) afterRound();
  }
  for (Samples& s : samples) out.push_back(finish(std::move(s)));
  return out;
}

namespace {

// A cell of a delimited table: quoted (RFC 4180, quotes doubled) when it holds the separator, a quote, a
// line break or space at its ends, as the info cells do.
std::string delimitedCell(const std::string& cell, const std::string& sep) {
  const bool quote = cell.find(sep) != std::string::npos || cell.find_first_of("\"\n\r") != std::string::npos ||
                     (!cell.empty() && (cell.front() == ' ' || cell.back() == ' '));
  if (!quote) return cell;
  std::string out = "\"";
  for (char c : cell) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::string formatTable(const std::vector<std::vector<std::string>>& rows, const std::string& sep) {
  if (sep.find_first_not_of(' ') != std::string::npos) {  // a delimiter (',', ';', a tab): CSV, unpadded
    std::string out;
    for (const auto& row : rows) {
      for (size_t i = 0; i < row.size(); ++i) out += (i ? sep : "") + delimitedCell(row[i], sep);
      out += "\n";
    }
    return out;
  }
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
