#include "bench/plot.h"

#include <fmt/format.h>

#include <algorithm>

namespace gj::bench {

namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

// Layout: a title line, then per group a heading and, per row, its name and two bars (fwd above bwd)
// whose lengths are proportional to the group's largest time, each labelled with its value.
std::string plotSvg(const std::string& title, const std::vector<PlotGroup>& groups) {
  constexpr int kWidth = 960, kLabel = 220, kBarMax = 600, kBar = 12, kRowGap = 8, kHeading = 34;
  const char* kFwd = "#4878d0";
  const char* kBwd = "#ee854a";
  int height = 60;
  for (const PlotGroup& g : groups) height += kHeading + static_cast<int>(g.rows.size()) * (2 * kBar + kRowGap);
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" "
      "font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">{}</text>\n"
      "<rect x=\"{}\" y=\"32\" width=\"12\" height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"41\">forward (ms)</text>\n"
      "<rect x=\"{}\" y=\"32\" width=\"12\" height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"41\">backward (ms)</text>\n",
      kWidth, height, escape(title), kLabel, kFwd, kLabel + 16, kLabel + 120, kBwd, kLabel + 136);
  int y = 60;
  for (const PlotGroup& g : groups) {
    s += fmt::format("<text x=\"10\" y=\"{}\" font-size=\"13\" font-weight=\"bold\">{}</text>\n", y + 20,
                     escape(g.name));
    y += kHeading;
    double top = 0;
    for (const PlotRow& r : g.rows) top = std::max({top, r.fwdMs, r.bwdMs.value_or(0.0)});
    auto bar = [&](double ms, int at, const char* color) {
      double w = top > 0 ? ms / top * kBarMax : 0;
      s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"/>"
                       "<text x=\"{:.1f}\" y=\"{}\">{:.3g}</text>\n",
                       kLabel, at, w, kBar - 1, color, kLabel + w + 4, at + kBar - 2, ms);
    };
    for (const PlotRow& r : g.rows) {
      s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", kLabel - 6, y + kBar + 3,
                       escape(r.name));
      bar(r.fwdMs, y, kFwd);
      if (r.bwdMs) bar(*r.bwdMs, y + kBar, kBwd);
      y += 2 * kBar + kRowGap;
    }
  }
  return s + "</svg>\n";
}

}  // namespace gj::bench
