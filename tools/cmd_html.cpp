// convlab html: redraws a results folder's report.html from its JSON files
// (report/html/report_html.hpp does the drawing); `convlab report` writes the
// same page at the end of its run.
#include <sys/stat.h>

#include <cstdio>
#include <vector>

#include "core/error.hpp"
#include "core/npy.hpp"
#include "core/paths.hpp"
#include "report/html/report_html.hpp"
#include "report/html/view.hpp"
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

namespace {

// DIR/name's text, or "" when the file is not there; a file that is there but unreadable, not a regular
// file (a FIFO, a socket, a device: never opened), or over 1 GiB is an error.
std::string read_if_present(const std::string& dir, const std::string& name) {
  const InputFile in(dir + "/" + name, "convlab html:", true);
  return in.exists() ? in.read_all(uint64_t(1) << 30) : std::string();
}

}  // namespace

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
  std::string dir = args.pos()[0];
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) fail("convlab html: '" + printable(dir) + "' is not a folder");
  const std::string out = args.has("out") ? args.get("out") : dir + "/report.html";
  require_output_path(out, "convlab html: --out");
  for (const char* name : {"train.json", "layers.json", "train_cuda.json", "layers_cuda.json"})
    if (same_file(out, dir + "/" + name))
      fail("convlab html: --out '" + printable(out) + "' is " + name + " of the folder it draws (the page would replace its data)");
  // Each results file is read, and its run id: the folder's run is train.json's (else the first file's),
  // and a file of another run -- a layers.json left by an earlier command -- is not drawn beside it.
  const bool mixed = args.has("mixed-runs");
  struct File {
    std::string name, text, run;
  };
  std::vector<File> files;
  for (const char* suffix : {"", "_cuda"})
    for (const char* base : {"train", "layers"}) {
      const std::string name = std::string(base) + suffix + ".json";
      File f{name, read_if_present(dir, name), ""};
      if (f.text.empty()) continue;
      f.run = train::html::read_run_id(f.text, name);
      files.push_back(std::move(f));
    }
  if (files.empty())
    fail("convlab html: '" + printable(dir) + "' has none of train.json, layers.json, train_cuda.json, layers_cuda.json");
  const std::string folder_run = files.front().run;  // train.json's when it is there: it comes first
  const auto run_text = [](const std::string& r) { return r.empty() ? std::string("none") : "'" + printable(r) + "'"; };
  train::HtmlInputs in;
  std::string used;
  for (const char* suffix : {"", "_cuda"}) {
    train::HtmlHalf h;
    h.title = *suffix ? "GPU" : "CPU";
    h.id_suffix = *suffix ? "-cuda" : "";
    for (File& f : files) {
      if (f.name != std::string("train") + suffix + ".json" && f.name != std::string("layers") + suffix + ".json") continue;
      if (f.run != folder_run) {
        const std::string what = f.name + " is from another run (run id " + run_text(f.run) + ", " +
                                 files.front().name + "'s is " + run_text(folder_run) + ")";
        if (!mixed) {
          std::fprintf(stderr, "note: convlab html: %s: not drawn (--mixed-runs draws it anyway)\n", what.c_str());
          h.note += (h.note.empty() ? "" : " ") + what + ": not drawn.";
          continue;
        }
        h.note += (h.note.empty() ? "" : " ") + what + ": drawn beside it (--mixed-runs).";
      }
      (f.name.rfind("train", 0) == 0 ? h.train_json : h.layers_json) = std::move(f.text);
      used += (used.empty() ? "" : ", ") + dir + "/" + f.name;
    }
    if (!h.train_json.empty() || !h.layers_json.empty() || !h.note.empty()) in.halves.push_back(std::move(h));
  }
  in.source = used + " (redrawn by convlab html" + (folder_run.empty() ? "" : ", run id " + folder_run) + ")";
  write_file_atomic(out, train::report_html(in));
  std::printf("wrote %s\n", printable(out).c_str());
  return 0;
}

}  // namespace convlab::cli
