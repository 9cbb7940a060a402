#include "core/problem_list.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>

#include "core/error.hpp"
#include "core/layers.hpp"
#include "core/paths.hpp"

namespace convlab {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::string networks_text() {
  std::string out;
  for (const auto& n : network_names()) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// A text meant as a problem string: after '_'s, n"..." or a known key.
bool looks_like_problem(std::string_view t) {
  while (!t.empty() && t.front() == '_') t.remove_prefix(1);
  if (t.size() >= 2 && t[0] == 'n' && t[1] == '"') return true;
  size_t j = 0;
  while (j < t.size() && std::isalpha(static_cast<unsigned char>(t[j]))) ++j;
  return j > 0 && is_problem_key(t.substr(0, j));
}

ConvProblem with_batch_checked(ConvProblem p, int batch, std::string_view text) {
  if (batch <= 0) return p;
  p.n = batch;
  if (auto e = p.validate(); !e.empty())
    fail("problem '" + printable(text) + "' at batch " + std::to_string(batch) + ": " + e);
  return p;
}

// NET | LAYER | PROBLEM (not @FILE).
void expand_one(std::string_view text, int batch, int default_batch, const std::string& origin,
                std::vector<ProblemItem>& out) {
  if (is_network(text)) {
    for (auto& l : network_layers(text, batch > 0 ? batch : default_batch))
      out.push_back({l.id, l.problem, std::nullopt, l.count, origin});
    return;
  }
  ConvProblem p = problem_from_text(text, batch, default_batch);
  std::string label = p.name.empty() ? p.key() : p.name;
  out.push_back({std::move(label), std::move(p), std::nullopt, 1, origin});
}

// The '#' that starts a comment: the first one outside a quoted name.
size_t comment_start(std::string_view line) {
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '"') quoted = !quoted;
    else if (line[i] == '#' && !quoted) return i;
  }
  return std::string_view::npos;
}

// Line-by-line reader of one @FILE; decides list vs log at the end.
class FileParser {
 public:
  FileParser(std::string source, int batch, int default_batch)
      : source_(std::move(source)), batch_(batch), default_batch_(default_batch) {}

  void line(std::string_view raw, size_t n) {
    const std::string where = source_ + ":" + std::to_string(n);
    if (raw.find('\0') != std::string_view::npos)
      fail(where + ": binary data (a NUL byte); expected problem strings or a oneDNN verbose log");
    const std::string_view t = trim(raw);
    if (is_onednn_verbose_line(t)) {
      ++verbose_lines_;
      verbose_line(t, where);
      return;
    }
    ++other_lines_;
    if (verbose_lines_ > 0 || !list_error_.empty()) return;  // a log's other lines; or the list is already bad
    const std::string_view body = trim(t.substr(0, std::min(t.size(), comment_start(t))));
    if (body.empty()) return;
    // benchdnn options (a harness file's --dir=..., shapes_mem_strided's
    // --strides=... before its problem) are not ours to apply: noted.
    if (body.substr(0, 2) == "--")
      return skip(where, "benchdnn options ('" + printable(body) + "') are not read here: one problem per line");
    std::vector<ProblemItem> items;
    try {
      if (body.front() == '@') fail("a problem file may not name another file ('" + printable(body) + "')");
      expand_one(body, batch_, default_batch_, where, items);
    } catch (const UnsupportedProblem& e) {
      skip(where, e.what());  // a problem convlab cannot run (3-D, ...): the rest of the file is read
      return;
    } catch (const Error& e) {
      list_error_ = where + ": " + e.what();
      return;
    }
    for (auto& it : items) add(list_, list_index_, std::move(it), where);
  }

  std::vector<ProblemItem> finish(std::vector<std::string>* notes) {
    if (notes) notes->clear();
    if (verbose_lines_ > 0) {
      if (log_.empty())
        fail(source_ + ": a oneDNN verbose log without a usable convolution exec line" +
             (first_unusable_.empty() ? std::string(" (run with ONEDNN_VERBOSE=1)") : " (first: " + first_unusable_ + ")"));
      if (notes) {
        std::string note = source_ + ": oneDNN verbose log: " + std::to_string(conv_execs_) +
                           " convolution executions, " + std::to_string(log_.size()) + " distinct (problem, direction)";
        if (unusable_)
          note += ", " + std::to_string(unusable_) + " convolution lines skipped (first: " + first_unusable_ + ")";
        note += ", " + std::to_string(verbose_lines_ - conv_execs_ - unusable_) + " other verbose lines and " +
                std::to_string(other_lines_) + " other lines skipped";
        notes->push_back(std::move(note));
      }
      return std::move(log_);
    }
    if (!list_error_.empty()) fail(list_error_);
    if (list_.empty() && skipped_count_ > 0)
      fail(source_ + ": nothing in it can be run here (" + std::to_string(skipped_count_) + " lines skipped; first: " +
           skipped_.front() + ")");
    if (list_.empty()) fail(source_ + ": no problems in the file (only blank lines and # comments)");
    if (notes) {
      *notes = skipped_;
      if (skipped_count_ > skipped_.size())
        notes->push_back(source_ + ": " + std::to_string(skipped_count_ - skipped_.size()) +
                         " more lines skipped (not named one by one)");
    }
    return std::move(list_);
  }

 private:
  void skip(const std::string& where, const std::string& why) {
    if (skipped_.size() < kMaxSkippedLineNotes) skipped_.push_back(where + ": skipped: " + why);
    ++skipped_count_;
  }

  // Outside any catch of line(): its message carries the location once, and a log's too-large
  // file is an error, not an unusable line.
  void add(std::vector<ProblemItem>& list, std::map<std::string, size_t>& index, ProblemItem it,
           const std::string& where) {
    std::string key = it.problem.canonical();
    if (it.dir) key += " " + std::string(to_string(*it.dir));
    if (auto f = index.find(key); f != index.end()) {
      list[f->second].count += it.count;
      return;
    }
    if (index.size() >= kMaxProblemFileEntries)
      fail(where + ": more than " + std::to_string(kMaxProblemFileEntries) + " distinct problems in one file");
    index.emplace(std::move(key), list.size());
    list.push_back(std::move(it));
  }

  void verbose_line(std::string_view t, const std::string& where) {
    std::optional<VerboseConv> vc;
    ConvProblem p;
    try {
      vc = parse_onednn_verbose_line(t);
      if (!vc) return;
      p = with_batch_checked(parse_problem(vc->descriptor), batch_, vc->descriptor);
    } catch (const Error& e) {
      // A convolution convlab cannot represent (3-D, ...): skipped and
      // counted; the note names the first.
      ++unusable_;
      if (first_unusable_.empty()) first_unusable_ = where + ": " + e.what();
      return;
    }
    ++conv_execs_;
    std::string label = p.key();
    add(log_, log_index_, {std::move(label), std::move(p), vc->dir, 1, where}, where);
  }

  std::string source_;
  int batch_, default_batch_;
  std::vector<ProblemItem> list_, log_;
  std::map<std::string, size_t> list_index_, log_index_;
  std::string list_error_, first_unusable_;
  std::vector<std::string> skipped_;  // a list's unsupported lines, the first kMaxSkippedLineNotes
  size_t verbose_lines_ = 0, other_lines_ = 0, conv_execs_ = 0, unusable_ = 0, skipped_count_ = 0;
};

}  // namespace

ConvProblem problem_from_text(std::string_view text, int batch, int layer_default_batch) {
  if (is_network(text)) {
    const auto layers = network_layers(text, batch > 0 ? batch : layer_default_batch);
    const std::string first = layers.empty() ? std::string(text) + ".conv1" : layers.front().id;
    fail("'" + std::string(text) + "' is a network (" + std::to_string(layers.size()) +
         " convolution layers), not one layer or problem: name one of its layers (" + first +
         ", ...) or give a benchdnn problem string");
  }
  const size_t dot = text.find('.');
  if (dot != std::string_view::npos && is_network(text.substr(0, dot)))
    return network_layer(text, batch > 0 ? batch : layer_default_batch).problem;
  ConvProblem p;
  try {
    p = parse_problem(text);
  } catch (const Error& e) {
    if (looks_like_problem(text)) throw;
    std::string_view t = text;
    while (!t.empty() && t.front() == '_') t.remove_prefix(1);
    size_t j = 0;
    while (j < t.size() && std::isalpha(static_cast<unsigned char>(t[j]))) ++j;
    const std::string why = j > 0 ? "unknown key '" + printable(t.substr(0, j)) + "'"
                            : t.empty() ? std::string("empty")
                                        : "unexpected character '" + printable(t.substr(0, 1)) + "'";
    fail("'" + printable(text) + "' is neither a network (" + networks_text() +
         "), a layer id (alexnet.conv2, ...) nor a benchdnn problem string (mb32ic96ih27oc256oh27kh5ph2, ...): " + why);
  }
  return with_batch_checked(std::move(p), batch, text);
}

bool is_onednn_verbose_line(std::string_view line) {
  line = trim(line);
  for (std::string_view m : {"onednn_verbose,", "dnnl_verbose,", "mkldnn_verbose,"})
    if (line.substr(0, m.size()) == m) return true;
  return false;
}

std::optional<VerboseConv> parse_onednn_verbose_line(std::string_view line) {
  if (!is_onednn_verbose_line(line)) return std::nullopt;
  std::vector<std::string_view> f;
  for (std::string_view field : split_list(trim(line))) f.push_back(trim(field));
  // marker[,v1][,timestamp][,primitive],exec,[engine,]convolution,impl,prop_kind,...
  size_t i = 1;
  while (i < f.size() && i <= 4 && f[i] != "exec") ++i;
  if (i >= f.size() || f[i] != "exec") return std::nullopt;
  size_t j = i + 1;
  if (j < f.size() && f[j] != "convolution") ++j;  // the engine kind (absent in mkldnn 0.x)
  if (j >= f.size() || f[j] != "convolution") return std::nullopt;
  if (j + 2 >= f.size()) fail("truncated oneDNN convolution line (no propagation kind)");
  const std::string_view prop = f[j + 2];
  Direction dir;
  if (prop == "forward_training" || prop == "forward_inference" || prop == "forward_scoring" || prop == "forward")
    dir = Direction::fwd;
  else if (prop == "backward_data")
    dir = Direction::bwd_data;
  else if (prop == "backward_weights")
    dir = Direction::bwd_filter;
  else
    fail("oneDNN convolution line with an unknown propagation kind '" + printable(prop) + "'");
  size_t k = j + 3;
  while (k < f.size() && f[k].substr(0, 4) != "alg:") ++k;
  if (k + 1 >= f.size() || f[k + 1].empty())
    fail("oneDNN convolution line without a problem descriptor after the alg: field");
  return VerboseConv{std::string(f[k + 1]), dir};
}

std::vector<ProblemItem> parse_problem_file(std::string_view contents, const std::string& source, int batch,
                                            int default_batch, std::vector<std::string>* notes) {
  FileParser fp(source, batch, default_batch);
  size_t n = 0;
  for (size_t at = 0; at < contents.size();) {
    size_t nl = contents.find('\n', at);
    if (nl == std::string_view::npos) nl = contents.size();
    ++n;
    if (nl - at > kMaxProblemLineBytes)
      fail(source + ":" + std::to_string(n) + ": line longer than " + std::to_string(kMaxProblemLineBytes) +
           " bytes (not a problem list or verbose log?)");
    fp.line(contents.substr(at, nl - at), n);
    at = nl + 1;
  }
  return fp.finish(notes);
}

std::vector<ProblemItem> read_problem_file(const std::string& path, int batch, int default_batch,
                                           std::vector<std::string>* notes) {
  const bool is_stdin = path == "-";
  const std::string source = is_stdin ? std::string("<stdin>") : printable(path);
  if (path.empty()) fail("'@' needs a file name (@FILE, or @- for stdin)");
  // A named file is opened only once it is known to be a regular file (a FIFO would block the open, a
  // device never end); stdin is whatever the user connected.
  std::optional<InputFile> file;
  if (!is_stdin) file.emplace(path, "problem file");
  const auto read_some = [&](char* buf, size_t n) -> size_t {
    if (file) return file->read(buf, n);
    for (;;) {
      const ssize_t got = ::read(0, buf, n);
      if (got >= 0) return size_t(got);
      if (errno != EINTR) fail("problem file '" + source + "': read error: " + std::strerror(errno));
    }
  };
  FileParser fp(source, batch, default_batch);
  std::string pending;  // the current line so far
  size_t total = 0, n = 0;
  char buf[1 << 16];
  for (;;) {
    const size_t got = read_some(buf, sizeof buf);
    if (got == 0) break;
    total += size_t(got);
    if (total > kMaxProblemFileBytes)
      fail("problem file '" + source + "' is larger than " + std::to_string(kMaxProblemFileBytes >> 20) + " MiB");
    std::string_view chunk(buf, size_t(got));
    for (;;) {
      const size_t nl = chunk.find('\n');
      const size_t take = nl == std::string_view::npos ? chunk.size() : nl;
      if (chunk.substr(0, take).find('\0') != std::string_view::npos)
        fail(source + ":" + std::to_string(n + 1) + ": binary data (a NUL byte); expected problem strings or a oneDNN verbose log");
      if (pending.size() + take > kMaxProblemLineBytes)
        fail(source + ":" + std::to_string(n + 1) + ": line longer than " + std::to_string(kMaxProblemLineBytes) +
             " bytes (not a problem list or verbose log?)");
      pending.append(chunk.substr(0, take));
      if (nl == std::string_view::npos) break;
      fp.line(pending, ++n);
      pending.clear();
      chunk.remove_prefix(nl + 1);
    }
  }
  if (!pending.empty()) fp.line(pending, ++n);
  return fp.finish(notes);
}

std::vector<Direction> item_directions(const ProblemItem& item, const std::vector<Direction>& dirs, bool dirs_given) {
  return item.dir && !dirs_given ? std::vector<Direction>{*item.dir} : dirs;
}

long parse_int(std::string_view text, long min, long max, std::string_view what) {
  const std::string t(text);
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(t.c_str(), &end, 10);
  if (t.empty() || *end != '\0' || errno == ERANGE)
    fail(std::string(what) + " expects an integer, got '" + printable(t) + "'");
  if (v < min || v > max)
    fail(std::string(what) + " must be in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " +
         printable(t));
  return v;
}

std::vector<long> parse_int_list(std::string_view text, long min, long max, std::string_view what) {
  std::vector<long> out;
  for (std::string_view item : split_list(text)) out.push_back(parse_int(item, min, max, what));
  return out;
}

ProblemSet expand_problems(const std::vector<std::string>& args, int batch, int default_batch) {
  ProblemSet out;
  out.network_batch = batch > 0 ? batch : default_batch;
  if (std::count(args.begin(), args.end(), "@-") > 1) fail("@- (stdin) given twice");
  std::vector<ProblemItem> all;
  for (const std::string& a : args) {
    if (!a.empty() && a.front() == '@') {
      const std::string path = a.substr(1);
      std::vector<std::string> notes;
      for (auto& it : read_problem_file(path, batch, default_batch, &notes)) all.push_back(std::move(it));
      for (auto& n : notes) out.notes.push_back(std::move(n));
      continue;
    }
    if (is_network(a) && std::find(out.networks.begin(), out.networks.end(), a) == out.networks.end())
      out.networks.push_back(a);
    expand_one(a, batch, default_batch, "", all);
  }
  // The same entry named twice -- a network or problem given twice, a layer id beside its network,
  // one problem in two files -- is run once: same label, problem and direction. (Different layers of
  // one shape stay apart: they are the network's own rows.) Counts add up; one note says so.
  std::map<std::string, size_t> index;
  size_t merged = 0;
  std::string first_merged;
  for (ProblemItem& it : all) {
    std::string key = it.label + "\x1f" + it.problem.canonical();
    if (it.dir) key += "\x1f" + std::string(to_string(*it.dir));
    if (auto f = index.find(key); f != index.end()) {
      out.items[f->second].count += it.count;
      if (merged++ == 0) first_merged = it.label;
      continue;
    }
    index.emplace(std::move(key), out.items.size());
    out.items.push_back(std::move(it));
  }
  if (merged)
    out.notes.push_back(std::to_string(merged) + " repeated " + (merged == 1 ? "entry" : "entries") +
                        " merged, each run once (first: " + first_merged + ")");
  return out;
}

}  // namespace convlab
