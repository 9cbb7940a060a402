// report.html: the results a reader wants first, as one self-contained page —
// inline CSS and inline SVG charts drawn by report/html/charts_*.cpp, no
// script needed to see it (a few lines of inline script only record where
// each chart landed, for the rendering test), nothing fetched from a network.
//
// It is drawn from the results files' JSON texts (train.json, layers.json and
// the GPU half's), the same documents the notebooks read: `convlab report`
// passes the texts it has just written, `convlab html DIR` reads them back
// from a results folder. Why JSON and not the structs: report/html/view.hpp.
#pragma once
#include <string>
#include <vector>

namespace convlab::train {

// One half of a report (the CPU's, the GPU's).
struct HtmlHalf {
  std::string title;        // "CPU", "GPU"
  std::string id_suffix;    // "" for the first half, "-cuda" for the GPU's: chart ids stay unique
  std::string train_json;   // "" = no training results (then `note` says why)
  std::string layers_json;  // "" = no per-layer comparison (--no-compare, or the tiny network)
  std::string note;         // shown at the top of the half: why it was skipped or failed
};

struct HtmlInputs {
  std::string command;      // the command line that produced the results ("" = unknown)
  std::string source;       // where the data came from ("results/train.json, results/layers.json")
  std::vector<HtmlHalf> halves;
};

// The page. A JSON text that does not parse throws convlab::Error naming it.
std::string report_html(const HtmlInputs& in);

}  // namespace convlab::train
