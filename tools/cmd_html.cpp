// convlab html: redraws a results folder's report.html from its JSON files
// (train/html/report_html.hpp does the drawing); `convlab report` writes the
// same page at the end of its run.
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/npy.hpp"
#include "core/paths.hpp"
#include "tools/cli.hpp"
#include "train/html/report_html.hpp"

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
// file, or over 1 GiB is an error.
std::string read_if_present(const std::string& dir, const std::string& name) {
  const std::string path = dir + "/" + name;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "";
  if (!S_ISREG(st.st_mode)) fail("convlab html: '" + printable(path) + "' is not a regular file");
  if (st.st_size > (1L << 30)) fail("convlab html: '" + printable(path) + "' is over 1 GiB");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("convlab html: cannot read '" + printable(path) + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

int cmd_html(int argc, char** argv) {
  Args args("html", "DIR [--out F]",
            "Redraws DIR/report.html from the results files in DIR: train.json, and layers.json,\n"
            "train_cuda.json, layers_cuda.json when they are there (what `convlab report` writes;\n"
            "`convlab train --json` and `convlab layers --json` write the same schemas). Nothing is\n"
            "measured. The page is self-contained: inline CSS and SVG, nothing fetched.");
  args.positionals("DIR", "a results folder", 1, 1);
  args.option("out", "F", "where the page goes (default DIR/report.html)");
  if (!args.parse(argc, argv)) return 0;
  std::string dir = args.pos()[0];
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) fail("convlab html: '" + printable(dir) + "' is not a folder");
  const std::string out = args.has("out") ? args.get("out") : dir + "/report.html";
  require_output_path(out, "convlab html: --out");
  train::HtmlInputs in;
  std::string used;
  for (const char* suffix : {"", "_cuda"}) {
    train::HtmlHalf h;
    h.title = *suffix ? "GPU" : "CPU";
    h.id_suffix = *suffix ? "-cuda" : "";
    h.train_json = read_if_present(dir, std::string("train") + suffix + ".json");
    h.layers_json = read_if_present(dir, std::string("layers") + suffix + ".json");
    for (const auto& [name, text] : {std::pair{"train", &h.train_json}, std::pair{"layers", &h.layers_json}})
      if (!text->empty()) used += (used.empty() ? "" : ", ") + dir + "/" + name + suffix + ".json";
    if (!h.train_json.empty() || !h.layers_json.empty()) in.halves.push_back(std::move(h));
  }
  if (in.halves.empty()) fail("convlab html: '" + printable(dir) + "' has none of train.json, layers.json, train_cuda.json, layers_cuda.json");
  in.source = used + " (redrawn by convlab html)";
  write_file_atomic(out, train::report_html(in));
  std::printf("wrote %s\n", out.c_str());
  return 0;
}

}  // namespace convlab::cli
