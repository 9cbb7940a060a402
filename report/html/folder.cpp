#include "report/html/folder.hpp"

#include <sys/stat.h>

#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/npy.hpp"
#include "core/paths.hpp"
#include "report/html/report_html.hpp"
#include "report/html/view.hpp"

namespace convlab::train {

namespace {

struct ResultsFile {
  std::string name, text, run;
};

// DIR/name's text, or "" when the file is not there; a file that is there but unreadable, not a regular
// file (a FIFO, a socket, a device: never opened), or over 1 GiB is an error.
std::string read_if_present(const std::string& dir, const std::string& name) {
  const InputFile in(dir + "/" + name, "convlab html:", true);
  return in.exists() ? in.read_all(uint64_t(1) << 30) : std::string();
}

// Every results file there, train*.json first, each with its run id.
std::vector<ResultsFile> read_results(const std::string& dir) {
  std::vector<ResultsFile> files;
  for (const char* suffix : {"", "_cuda"})
    for (const char* base : {"train", "layers"}) {
      const std::string name = std::string(base) + suffix + ".json";
      ResultsFile f{name, read_if_present(dir, name), ""};
      if (f.text.empty()) continue;
      f.run = html::read_run_id(f.text, name);
      files.push_back(std::move(f));
    }
  if (files.empty())
    fail("convlab html: '" + printable(dir) + "' has none of train.json, layers.json, train_cuda.json, layers_cuda.json");
  return files;
}

std::string run_text(const std::string& r) { return r.empty() ? std::string("none") : "'" + printable(r) + "'"; }

// One half (suffix "" the CPU's, "_cuda" the GPU's) from the files of the folder's run; `used` gets the
// paths drawn.
HtmlHalf half_of(std::vector<ResultsFile>& files, const std::string& suffix, const HtmlRedrawOptions& opt,
                 const std::string& dir, std::string& used) {
  const std::string folder_run = files.front().run;  // train.json's when it is there: it comes first
  HtmlHalf h;
  h.title = suffix.empty() ? "CPU" : "GPU";
  h.id_suffix = suffix.empty() ? "" : "-cuda";
  for (ResultsFile& f : files) {
    if (f.name != "train" + suffix + ".json" && f.name != "layers" + suffix + ".json") continue;
    if (f.run != folder_run) {
      const std::string what = f.name + " is from another run (run id " + run_text(f.run) + ", " + files.front().name +
                               "'s is " + run_text(folder_run) + ")";
      if (!opt.mixed_runs) {
        if (opt.on_note) opt.on_note(what);
        h.note += (h.note.empty() ? "" : " ") + what + ": not drawn.";
        continue;
      }
      h.note += (h.note.empty() ? "" : " ") + what + ": drawn beside it (--mixed-runs).";
    }
    (f.name.rfind("train", 0) == 0 ? h.train_json : h.layers_json) = std::move(f.text);
    used += (used.empty() ? "" : ", ") + dir + "/" + f.name;
  }
  return h;
}

}  // namespace

std::string redraw_html(const HtmlRedrawOptions& opt) {
  std::string dir = opt.dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) fail("convlab html: '" + printable(dir) + "' is not a folder");
  const std::string out = opt.out ? *opt.out : dir + "/report.html";
  require_output_path(out, "convlab html: --out");
  for (const char* name : {"train.json", "layers.json", "train_cuda.json", "layers_cuda.json"})
    if (same_file(out, dir + "/" + name))
      fail("convlab html: --out '" + printable(out) + "' is " + name + " of the folder it draws (the page would replace its data)");
  std::vector<ResultsFile> files = read_results(dir);
  const std::string folder_run = files.front().run;
  HtmlInputs in;
  std::string used;
  for (const char* suffix : {"", "_cuda"}) {
    HtmlHalf h = half_of(files, suffix, opt, dir, used);
    if (!h.train_json.empty() || !h.layers_json.empty() || !h.note.empty()) in.halves.push_back(std::move(h));
  }
  in.source = used + " (redrawn by convlab html" + (folder_run.empty() ? "" : ", run id " + folder_run) + ")";
  write_file_atomic(out, report_html(in));
  return out;
}

}  // namespace convlab::train
