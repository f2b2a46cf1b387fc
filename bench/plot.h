#pragma once
// graphbench --plot: the tables as grouped horizontal bars (forward and backward medians) in SVG.
#include <optional>
#include <string>
#include <vector>

namespace gj::bench {

struct PlotRow {
  std::string name;
  double fwdMs = 0;
  std::optional<double> bwdMs;
};

struct PlotGroup {
  std::string name;
  std::vector<PlotRow> rows;
};

/// A standalone SVG document; each group scaled to its own largest time.
std::string plotSvg(const std::string& title, const std::vector<PlotGroup>& groups);

}  // namespace gj::bench
