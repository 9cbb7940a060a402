// The drawing primitives of report.html (report/html/report_html.hpp): text
// escaping, number formatting, axis scales with readable ticks, and an SVG
// canvas that accumulates elements. Plain strings in, SVG text out; no chart
// knows another chart's layout.
//
// Every chart is one <svg id="chart-..." data-marker="#rrggbb">, and the
// canvas draws a small square of that exact colour at its top-left corner:
// the rendering test (tests/scripts/report_html_test.sh) finds each chart by
// its id in the DOM and then that colour inside the chart's rectangle of the
// screenshot, so "every chart drew" is checked on pixels, not on markup.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace convlab::train::html {

// HTML/SVG text: & < > " ' escaped.
std::string esc(std::string_view s);
// v with `sig` significant digits and no exponent for everyday sizes ("0.0123", "1230", "5.3").
std::string num(double v, int sig = 3);
// An axis tick: the shortest text of v ("0.5", "20", "1000").
std::string tick(double v);
// printf into a string.
std::string fmt(const char* f, double v);

// A linear or log10 map from data [d0, d1] to pixels [r0, r1].
struct Scale {
  double d0 = 0, d1 = 1, r0 = 0, r1 = 1;
  bool log = false;
  double operator()(double v) const;
};

// Tick values for [lo, hi]: about `n` steps of 1, 2 or 5 x 10^k (linear), or
// the powers of ten and their 2x and 5x (log, when the span is short).
std::vector<double> linear_ticks(double lo, double hi, int n = 6);
std::vector<double> log_ticks(double lo, double hi);
// The smallest "nice" number >= v (1, 2, 2.5, 5 x 10^k), for an axis maximum.
double nice_ceil(double v);

// The palettes (colour-blind-safe Tableau 10 order), and the fixed colours of
// the directions and layer groups, used by every chart and legend.
const std::string& category_colour(size_t i);
extern const char* const kFwdColour;
extern const char* const kBwdDataColour;
extern const char* const kBwdFilterColour;
extern const char* const kFcColour;
extern const char* const kOtherColour;
extern const char* const kSavedColour;   // attribution: faster than the baseline
extern const char* const kLostColour;    // attribution: slower

constexpr double kTitleHeight = 30;

class Svg {
 public:
  // `marker` is the chart's own exact colour (see the top of this file); `title` is drawn above the
  // chart, after the marker, and is its accessible name. Drawing coordinates start under the title:
  // (0, 0) is the top-left of the chart's own area, `height` its height (the title adds kTitleHeight).
  Svg(std::string id, double width, double height, std::string marker, std::string title);
  double width() const { return w_; }
  double height() const { return h_; }

  void rect(double x, double y, double w, double h, std::string_view fill, std::string_view extra = "");
  void line(double x1, double y1, double x2, double y2, std::string_view stroke, double width = 1,
            std::string_view extra = "");
  // anchor: start | middle | end; `extra` is more attributes (class, font-weight, transform, ...).
  void text(double x, double y, std::string_view s, std::string_view anchor = "start", double size = 12,
            std::string_view extra = "");
  void circle(double cx, double cy, double r, std::string_view fill, std::string_view extra = "");
  // A hover tooltip for the next element group: <g><title>tip</title>...</g>.
  void open_group(std::string_view tip);
  void close_group();
  void raw(std::string_view s) { body_ += s; }

  // Axes: a horizontal axis at pixel row y with ticks (grid lines up to `grid_top` when >= 0) and a
  // label under it; a vertical one at pixel column x (grid to `grid_right` when >= 0).
  void x_axis(const Scale& s, const std::vector<double>& ticks, double y, std::string_view label,
              double grid_top = -1);
  void y_axis(const Scale& s, const std::vector<double>& ticks, double x, std::string_view label,
              double grid_right = -1);
  // One legend row starting at (x, y): a swatch and its text per entry; returns the x after it.
  double legend(double x, double y, const std::vector<std::pair<std::string, std::string>>& colour_text);

  std::string str() const;

 private:
  std::string id_, marker_, title_, body_;
  double w_, h_;
};

}  // namespace convlab::train::html
