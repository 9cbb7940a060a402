// The charts of report.html, each an inline SVG drawn from the views
// (report/html/view.hpp). Each returns a Figure: the <svg id="chart-..."> and
// a caption saying how to read it and what the data lacks (no interval, no
// limit, ...); an empty svg when there is nothing to draw (then the caption
// says why). `suffix` keeps the GPU half's ids apart ("" or "-cuda").
//
// Chart ids (the rendering test checks each by id and by its marker colour):
//   chart-policy-time   iteration time per policy: median bar, 95 % interval whiskers, every timed
//                       iteration as a dot, speedup vs the baseline ("not significant" marked), the limit
//   chart-breakdown     per policy, the iteration stacked: conv fwd / bwd-data / bwd-filter, fc, other
//   chart-layers        per layer, one stacked bar per policy (bandwidth bound and interval when present)
//   chart-attribution   ms saved per (layer, direction) vs the baseline, one diverging panel per policy
//   chart-in-context    find in context: isolated vs in-training time per candidate (when present)
//   chart-roofline      every algorithm's effective GFLOP/s vs arithmetic intensity, peak and bandwidth
//   chart-peak          per (layer, direction), each algorithm as % of the measured peak (small multiples)
//   chart-pick          find vs get vs the vendor's pick per (layer, direction), time relative to find
#pragma once
#include <string>

#include "report/html/view.hpp"

namespace convlab::train::html {

struct Figure {
  std::string svg;      // "" = nothing to draw
  std::string caption;  // HTML
};

// The page width every chart is laid out for (CSS pixels).
constexpr double kChartWidth = 1300;

Figure chart_policy_time(const TrainView& t, const std::string& suffix);
Figure chart_breakdown(const TrainView& t, const std::string& suffix);
Figure chart_layers(const TrainView& t, const std::string& suffix);
Figure chart_attribution(const TrainView& t, const std::string& suffix);
Figure chart_in_context(const TrainView& t, const std::string& suffix);
Figure chart_roofline(const LayersView& l, const std::string& suffix);
Figure chart_peak(const LayersView& l, const std::string& suffix);
Figure chart_pick(const LayersView& l, const std::string& suffix);

// The layer groups of the per-layer charts and the attribution, shared with the page's tables:
// conv layers one by one, fc layers one by one, the other layers by kind, then the loss and update.
struct LayerGroup {
  std::string label;
  std::string kind;               // conv | fc | other | loss
  std::vector<size_t> layers;     // indices into PolicyView::layers
};
std::vector<LayerGroup> layer_groups(const PolicyView& p);
// A group's time for one policy: conv per direction (fwd, bwd-data, bwd-filter); for fc and other
// layers, forward and backward in [0] and [1]; loss+update as [0].
void group_times(const PolicyView& p, const LayerGroup& g, double out[3]);

}  // namespace convlab::train::html
