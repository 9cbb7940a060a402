// SVG primitives for report.html (report/html/svg.hpp).
#include "report/html/svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace convlab::train::html {

std::string esc(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string num(double v, int sig) {
  if (!std::isfinite(v)) return "–";
  if (v == 0) return "0";
  const double a = std::fabs(v);
  if (a >= 1e7 || a < 1e-4) return fmt("%.2e", v);
  // Digits after the point so that `sig` significant digits show, none for large values.
  const int mag = int(std::floor(std::log10(a)));
  const int decimals = std::max(0, sig - 1 - mag);
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", decimals, v);
  return b;
}

std::string tick(double v) {
  if (std::fabs(v) >= 1e6 || (v != 0 && std::fabs(v) < 1e-3)) return fmt("%.0e", v);
  return fmt("%.6g", v);
}

double Scale::operator()(double v) const {
  if (log) {
    const double l0 = std::log10(d0), l1 = std::log10(d1);
    return r0 + (std::log10(std::max(v, 1e-300)) - l0) / (l1 - l0) * (r1 - r0);
  }
  return d1 == d0 ? r0 : r0 + (v - d0) / (d1 - d0) * (r1 - r0);
}

namespace {
double nice_step(double span, int n) {
  const double raw = span / std::max(n, 1);
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (raw <= m * p) return m * p;
  return 10 * p;
}
}  // namespace

double nice_ceil(double v) {
  if (!(v > 0)) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0})
    if (v <= m * p * (1 + 1e-9)) return m * p;
  return 10 * p;
}

std::vector<double> linear_ticks(double lo, double hi, int n) {
  std::vector<double> t;
  if (!(hi > lo)) return {lo};
  const double step = nice_step(hi - lo, n);
  for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step)
    t.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
  return t;
}

std::vector<double> log_ticks(double lo, double hi) {
  std::vector<double> t;
  if (!(lo > 0 && hi > lo)) return t;
  const bool dense = std::log10(hi / lo) < 3;
  for (double p = std::pow(10.0, std::floor(std::log10(lo))); p <= hi * 1.0001; p *= 10)
    for (double m : dense ? std::vector<double>{1, 2, 5} : std::vector<double>{1})
      if (m * p >= lo * 0.9999 && m * p <= hi * 1.0001) t.push_back(m * p);
  return t;
}

const std::string& category_colour(size_t i) {
  static const std::vector<std::string> p = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                             "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
  return p[i % p.size()];
}
const char* const kFwdColour = "#4e79a7";
const char* const kBwdDataColour = "#f28e2b";
const char* const kBwdFilterColour = "#59a14f";
const char* const kFcColour = "#b07aa1";
const char* const kOtherColour = "#bab0ac";
const char* const kSavedColour = "#2e8540";
const char* const kLostColour = "#c0392b";

namespace {
std::string n2(double v) { return fmt("%.1f", v); }
}  // namespace

Svg::Svg(std::string id, double width, double height, std::string marker, std::string title)
    : id_(std::move(id)), marker_(std::move(marker)), title_(std::move(title)), w_(width), h_(height) {}

void Svg::rect(double x, double y, double w, double h, std::string_view fill, std::string_view extra) {
  if (w < 0) x += w, w = -w;
  body_ += "<rect x=\"" + n2(x) + "\" y=\"" + n2(y) + "\" width=\"" + n2(w) + "\" height=\"" + n2(h) + "\" fill=\"" +
           std::string(fill) + "\"" + (extra.empty() ? "" : " " + std::string(extra)) + "/>";
}

void Svg::line(double x1, double y1, double x2, double y2, std::string_view stroke, double width,
               std::string_view extra) {
  body_ += "<line x1=\"" + n2(x1) + "\" y1=\"" + n2(y1) + "\" x2=\"" + n2(x2) + "\" y2=\"" + n2(y2) + "\" stroke=\"" +
           std::string(stroke) + "\" stroke-width=\"" + n2(width) + "\"" + (extra.empty() ? "" : " " + std::string(extra)) +
           "/>";
}

void Svg::text(double x, double y, std::string_view s, std::string_view anchor, double size, std::string_view extra) {
  body_ += "<text x=\"" + n2(x) + "\" y=\"" + n2(y) + "\" font-size=\"" + n2(size) + "\"" +
           (anchor == "start" ? "" : " text-anchor=\"" + std::string(anchor) + "\"") +
           (extra.empty() ? "" : " " + std::string(extra)) + ">" + esc(s) + "</text>";
}

void Svg::circle(double cx, double cy, double r, std::string_view fill, std::string_view extra) {
  body_ += "<circle cx=\"" + n2(cx) + "\" cy=\"" + n2(cy) + "\" r=\"" + n2(r) + "\" fill=\"" + std::string(fill) + "\"" +
           (extra.empty() ? "" : " " + std::string(extra)) + "/>";
}

void Svg::open_group(std::string_view tip) { body_ += "<g><title>" + esc(tip) + "</title>"; }
void Svg::close_group() { body_ += "</g>"; }

void Svg::x_axis(const Scale& s, const std::vector<double>& ticks, double y, std::string_view label, double grid_top) {
  line(std::min(s.r0, s.r1), y, std::max(s.r0, s.r1), y, "#333");
  for (double t : ticks) {
    const double x = s(t);
    if (grid_top >= 0) line(x, grid_top, x, y, "#e3e3e3");
    line(x, y, x, y + 4, "#333");
    text(x, y + 16, tick(t), "middle", 11, "fill=\"#333\"");
  }
  if (!label.empty()) text((s.r0 + s.r1) / 2, y + 32, label, "middle", 12, "fill=\"#222\"");
}

void Svg::y_axis(const Scale& s, const std::vector<double>& ticks, double x, std::string_view label, double grid_right) {
  line(x, std::min(s.r0, s.r1), x, std::max(s.r0, s.r1), "#333");
  for (double t : ticks) {
    const double y = s(t);
    if (grid_right >= 0) line(x, y, grid_right, y, "#e3e3e3");
    line(x - 4, y, x, y, "#333");
    text(x - 6, y + 4, tick(t), "end", 11, "fill=\"#333\"");
  }
  if (!label.empty()) {
    const double my = (s.r0 + s.r1) / 2, lx = x - 48;
    text(lx, my, label, "middle", 12, "fill=\"#222\" transform=\"rotate(-90 " + n2(lx) + " " + n2(my) + ")\"");
  }
}

double Svg::legend(double x, double y, const std::vector<std::pair<std::string, std::string>>& colour_text) {
  for (const auto& [colour, t] : colour_text) {
    rect(x, y - 10, 12, 12, colour);
    text(x + 16, y, t, "start", 12, "fill=\"#222\"");
    x += 16 + 7.0 * double(t.size()) + 18;
  }
  return x;
}

std::string Svg::str() const {
  // The title row: the marker square (the chart's own exact colour, 12x12 px, crisp edges) and the title;
  // then the chart, shifted under it.
  const double h = h_ + kTitleHeight;
  return "<svg id=\"" + esc(id_) + "\" data-marker=\"" + esc(marker_) + "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
         n2(w_) + "\" height=\"" + n2(h) + "\" viewBox=\"0 0 " + n2(w_) + " " + n2(h) + "\" role=\"img\" aria-label=\"" +
         esc(title_) + "\" font-family=\"DejaVu Sans, Liberation Sans, Arial, sans-serif\"><rect x=\"0\" y=\"6\" width=\"12\" "
         "height=\"12\" fill=\"" + esc(marker_) + "\" shape-rendering=\"crispEdges\"/><text x=\"20\" y=\"17\" font-size=\"15\" "
         "font-weight=\"bold\" fill=\"#222\">" + esc(title_) + "</text><g transform=\"translate(0 " + n2(kTitleHeight) + ")\">" +
         body_ + "</g></svg>";
}

}  // namespace convlab::train::html
