// Line charts as self-contained SVG, written without any plotting stack (`tessel tune --plot`):
// panels side by side with axes, ticks and grid lines, and one legend for all of them. Each
// series is a <polyline class="series" data-series="NAME" data-points="x,y x,y ...">, so tools
// (and the tests) can read the values back.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tessel::cli {

struct PlotSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y)
};

struct PlotPanel {
  std::string title, x_label, y_label;
  std::vector<PlotSeries> series;  // series i has the same color in every panel
  bool steps = false;              // a value holds until the next point (a best so far)
};

std::string line_plot_svg(const std::string& title, const std::vector<PlotPanel>& panels);

}  // namespace tessel::cli
