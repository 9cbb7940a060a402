// Redrawing a results folder's report.html (`convlab html DIR`): its JSON files
// are read back (train.json, layers.json, train_cuda.json, layers_cuda.json,
// whichever are there), each with the id of the run that wrote it. The folder's
// run is train.json's (else the first file's); a file of another run -- a
// layers.json left by an earlier command -- is left out with a note, or drawn
// beside it with mixed_runs (and the page says so). Nothing is measured.
#pragma once
#include <functional>
#include <optional>
#include <string>

namespace convlab::train {

struct HtmlRedrawOptions {
  std::string dir;  // the results folder (trailing '/' ignored)
  std::optional<std::string> out;  // where the page goes (none: DIR/report.html)
  bool mixed_runs = false;
  // Each file left out or drawn from another run, as it is read ("layers.json is from another run ...").
  std::function<void(const std::string&)> on_note;
};

// Checks the folder and the output path, reads the files, draws the page and writes it atomically;
// returns where it went. Throws Error (one line) for a folder that is not there or holds none of the
// files, an output path that cannot be written or is one of the files it draws, a file that cannot
// be read or a JSON text that does not parse.
std::string redraw_html(const HtmlRedrawOptions& opt);

}  // namespace convlab::train
