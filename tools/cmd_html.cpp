// convlab html: redraws a results folder's report.html from its JSON files
// (report/html/folder.hpp reads the folder, report/html/report_html.hpp draws); `convlab report` writes the
// same page at the end of its run.
#include <cstdio>
#include <string>

#include "core/error.hpp"
#include "core/npy.hpp"
#include "core/paths.hpp"
#include "report/html/folder.hpp"
#include "tools/cli.hpp"

namespace convlab::cli {

std::string command_line(const std::string& program, int argc, char** argv) {
  std::string out = program;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    const bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                                         "-_=.,:/+@%") == std::string::npos;
    std::string q = "'";
    for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += " " + (plain ? a : q + "'");
  }
  return out;
}

int cmd_html(int argc, char** argv) {
  Args args("html", "DIR [--out F] [--mixed-runs]",
            "Redraws DIR/report.html from the results files in DIR: train.json, and layers.json,\n"
            "train_cuda.json, layers_cuda.json when they are there (what `convlab report` writes;\n"
            "`convlab train --json` and `convlab layers --json` write the same schemas). Each file carries\n"
            "the id of the run that wrote it: files of one run are drawn together, a file of another run\n"
            "is left out with a note (--mixed-runs draws it, and the page says so). Nothing is\n"
            "measured. The page is self-contained: inline CSS and SVG, nothing fetched.");
  args.positionals("DIR", "a results folder", 1, 1);
  args.option("out", "F", "where the page goes (default DIR/report.html)");
  args.flag("mixed-runs",
            "also draw files of another run: without it, a file whose run id differs from train.json's (the first\n"
            "file's without one) is left out with a note; with it, the page says which runs it mixes");
  if (!args.parse(argc, argv)) return 0;
  train::HtmlRedrawOptions opt;
  opt.dir = args.pos()[0];
  if (args.has("out")) opt.out = args.get("out");
  opt.mixed_runs = args.has("mixed-runs");
  opt.on_note = [](const std::string& what) {
    std::fprintf(stderr, "note: convlab html: %s: not drawn (--mixed-runs draws it anyway)\n", what.c_str());
  };
  const std::string out = train::redraw_html(opt);
  std::printf("wrote %s\n", printable(out).c_str());
  return 0;
}

}  // namespace convlab::cli
