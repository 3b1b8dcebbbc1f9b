#include "cli/svg_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tessel::cli {

namespace {

// Matplotlib's tab10, so that series look as they would in a notebook.
constexpr const char* kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                   "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
constexpr double kPanelW = 420, kPanelH = 300, kLeft = 64, kRight = 16, kTop = 32, kBottom = 44;
constexpr double kTitleH = 36, kLegendRow = 18;

std::string escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// A tick step of 1, 2 or 5 times a power of ten giving about five ticks over [0, max].
double tick_step(double max) {
  double raw = max / 5, magnitude = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0}) {
    if (m * magnitude >= raw) return m * magnitude;
  }
  return 10 * magnitude;
}

// The axis runs from 0 to a whole number of steps at or above the largest value.
struct Axis {
  double max, step;
  explicit Axis(double largest) {
    if (!(largest > 0) || !std::isfinite(largest)) largest = 1;
    step = tick_step(largest);
    max = std::ceil(largest / step - 1e-9) * step;
  }
};

std::string panel_svg(const PlotPanel& p, double x0, double y0) {
  double xmax = 0, ymax = 0;
  for (const PlotSeries& s : p.series) {
    for (auto [x, y] : s.points) {
      if (std::isfinite(x)) xmax = std::max(xmax, x);
      if (std::isfinite(y)) ymax = std::max(ymax, y);
    }
  }
  Axis xa(xmax), ya(ymax);
  double w = kPanelW - kLeft - kRight, h = kPanelH - kTop - kBottom;
  double left = x0 + kLeft, top = y0 + kTop, bottom = top + h;
  auto px = [&](double x) { return left + x / xa.max * w; };
  auto py = [&](double y) { return bottom - y / ya.max * h; };
  std::string out = fmt::format("<g class=\"panel\" data-title=\"{}\">\n", escaped(p.title));
  out += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"13\">{}</text>\n",
      left + w / 2, y0 + 20, escaped(p.title));
  for (double t = 0; t <= xa.max + xa.step / 2; t += xa.step) {
    out += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#e4e4e4\"/>"
        "<text x=\"{0:.1f}\" y=\"{3:.1f}\" text-anchor=\"middle\" font-size=\"10\">{4:g}</text>\n",
        px(t), top, bottom, bottom + 14, t);
  }
  for (double t = 0; t <= ya.max + ya.step / 2; t += ya.step) {
    out += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"#e4e4e4\"/>"
        "<text x=\"{3:.1f}\" y=\"{4:.1f}\" text-anchor=\"end\" font-size=\"10\">{5:g}</text>\n",
        left, py(t), left + w, left - 5, py(t) + 3.5, t);
  }
  out += fmt::format(
      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" "
      "stroke=\"#444\"/>\n",
      left, top, w, h);
  out += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" font-size=\"11\">{}</text>\n",
      left + w / 2, bottom + 32, escaped(p.x_label));
  out += fmt::format(
      "<text transform=\"translate({:.1f},{:.1f}) rotate(-90)\" text-anchor=\"middle\" "
      "font-size=\"11\">{}</text>\n",
      x0 + 16, top + h / 2, escaped(p.y_label));
  for (size_t i = 0; i < p.series.size(); ++i) {
    // points in pixels; data-points the values, for whoever reads the file back.
    std::string points, data;
    double last_y = NAN;
    for (auto [x, y] : p.series[i].points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      if (p.steps && std::isfinite(last_y))
        points += fmt::format(" {:.1f},{:.1f}", px(x), py(last_y));
      points += fmt::format("{}{:.1f},{:.1f}", points.empty() ? "" : " ", px(x), py(y));
      last_y = y;
      data += fmt::format("{}{:g},{:g}", data.empty() ? "" : " ", x, y);
    }
    out += fmt::format(
        "<polyline class=\"series\" data-series=\"{}\" data-points=\"{}\" fill=\"none\" "
        "stroke=\"{}\" stroke-width=\"1.5\" points=\"{}\"/>\n",
        escaped(p.series[i].name), data, kColors[i % std::size(kColors)], points);
  }
  return out + "</g>\n";
}

}  // namespace

std::string line_plot_svg(const std::string& title, const std::vector<PlotPanel>& panels) {
  size_t legend_rows = 0;
  for (const PlotPanel& p : panels) legend_rows = std::max(legend_rows, p.series.size());
  double width = std::max<size_t>(panels.size(), 1) * kPanelW;
  double height = kTitleH + kPanelH + 8 + legend_rows * kLegendRow + 8;
  std::string out = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
      "viewBox=\"0 0 {0:.0f} {1:.0f}\" font-family=\"Helvetica, Arial, sans-serif\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2:.1f}\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">{3}</text>\n",
      width, height, width / 2, escaped(title));
  for (size_t i = 0; i < panels.size(); ++i) out += panel_svg(panels[i], i * kPanelW, kTitleH);
  // The legend names the first panel's series; every panel colors series i alike.
  if (!panels.empty()) {
    double y = kTitleH + kPanelH + 8;
    out += "<g class=\"legend\">\n";
    for (size_t i = 0; i < panels[0].series.size(); ++i, y += kLegendRow) {
      out += fmt::format(
          "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"{3}\" "
          "stroke-width=\"3\"/><text x=\"{4:.1f}\" y=\"{5:.1f}\" font-size=\"11\">{6}</text>\n",
          kLeft, y + 6, kLeft + 24, kColors[i % std::size(kColors)], kLeft + 30, y + 10,
          escaped(panels[0].series[i].name));
    }
    out += "</g>\n";
  }
  return out + "</svg>\n";
}

}  // namespace tessel::cli
