// Problems as users have them: the one expansion of the PROBLEM... arguments
// that every command (problem, conv, tune, layers) accepts.
//
//   NET       alexnet, alexnet-owt, vgg16, resnet50, mobilenet_v2, densenet121, tiny: every convolution layer
//   LAYER     a layer id, alexnet.conv2
//   PROBLEM   a benchdnn descriptor, g2mb32ic96ih27oc256oh27kh5ph2n"alexnet:conv2"
//   @FILE     a file (@- = stdin) holding either
//             - a problem list: one NET, LAYER or PROBLEM per line, '#' starts a
//               comment (outside n"..."), blank lines ignored (benchdnn's
//               --batch=FILE shape files read as they are), or
//             - a oneDNN verbose log (ONEDNN_VERBOSE=1 output, the onednn_verbose,
//               dnnl_verbose or mkldnn_verbose prefix, with or without timestamps
//               or the v1 / primitive fields of 3.x): every convolution "exec"
//               line gives its problem descriptor and direction (forward_* ->
//               fwd, backward_data -> bwd-data, backward_weights -> bwd-filter).
//               Every other line (other primitives, create lines, the program's
//               own output) is skipped; a file with at least one verbose line is
//               read as a log.
//             Repeated (problem, direction) entries of one file collapse into one
//             with a count. Errors name FILE:LINE. A line of a list that is a
//             well-formed problem convlab cannot run (UnsupportedProblem: 3-D,
//             past 32-bit sizes) or a line of benchdnn options (--dir=...) is a
//             note naming FILE:LINE and the reason, and the rest of the file is
//             read; a file of nothing else is an error. What is read is bounded
//             (line length, file size, distinct entries); a path that is not a
//             regular file (a FIFO, a socket, a device, a folder) is refused
//             before it is opened (core/paths.hpp's InputFile).
//
// The same entry given twice on the command line -- a network or problem twice,
// a layer id beside its network, one problem in two files (same label, problem
// and direction) -- is run once: its counts add up and a note says so.
//
// Minibatch: batch > 0 overrides every problem's mb (networks, layer ids,
// problem strings and file entries alike); batch == 0 leaves problem strings
// their own mb and gives networks and layer ids `default_batch`.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/problem.hpp"

namespace convlab {

struct ProblemItem {
  std::string label;              // layer id, the problem's name, else its key()
  ConvProblem problem;
  std::optional<Direction> dir;   // the direction a oneDNN verbose line ran
  int count = 1;                  // occurrences (a network's repeated layer, collapsed duplicates)
  std::string origin;             // "FILE:LINE" for entries read from a file
};

struct ProblemSet {
  std::vector<ProblemItem> items;
  std::vector<std::string> networks;  // networks named on the command line (not in files)
  std::vector<std::string> notes;     // a verbose log's summary (what was used and skipped); a list's skipped lines;
                                      // one for merged repeats
  int network_batch = 0;              // the minibatch networks and layer ids were given
};

inline constexpr size_t kMaxProblemLineBytes = size_t(64) << 10;    // 64 KiB
inline constexpr size_t kMaxProblemFileBytes = size_t(1) << 30;     // 1 GiB
inline constexpr size_t kMaxProblemFileEntries = 100000;            // distinct entries per file
inline constexpr size_t kMaxSkippedLineNotes = 20;                  // a list's skipped lines named one by one

// Expands NET|LAYER|PROBLEM|@FILE arguments in order; throws Error (one line)
// on the first bad one, before any work is done.
ProblemSet expand_problems(const std::vector<std::string>& args, int batch = 0, int default_batch = 32);

// The directions to run `item` in: `dirs` (parse_directions()), except that an
// item read from a oneDNN verbose line keeps its own direction unless the user
// named directions (`dirs_given`, e.g. --dir on the command line).
std::vector<Direction> item_directions(const ProblemItem& item, const std::vector<Direction>& dirs, bool dirs_given);

// Numbers of the command line. `what` starts each message, e.g. "convlab
// layers: --threads" -> "convlab layers: --threads expects an integer, got
// 'x'" / "... must be in [0, 4096], got 5000"; throws Error with that one line.
long parse_int(std::string_view text, long min, long max, std::string_view what);
// A comma list of them ("1,2"; split_list(), so an empty item is an error).
std::vector<long> parse_int_list(std::string_view text, long min, long max, std::string_view what);

// One NET-free argument: a layer id or a benchdnn descriptor (not @FILE). A
// text that is neither says so, listing the networks and a layer id.
ConvProblem problem_from_text(std::string_view text, int batch = 0, int layer_default_batch = 32);

// The contents of one @FILE (its name `source` is used in messages): problem
// list or verbose log as above. `notes` receives the lines to tell the user: a
// log's summary ("FILE: oneDNN verbose log: ..."), or a list's skipped lines
// ("FILE:LINE: skipped: ...", the first kMaxSkippedLineNotes, then their count).
std::vector<ProblemItem> parse_problem_file(std::string_view contents, const std::string& source, int batch = 0,
                                            int default_batch = 32, std::vector<std::string>* notes = nullptr);
// Reads `path` ("-" = stdin) with the bounds above and parses it.
std::vector<ProblemItem> read_problem_file(const std::string& path, int batch = 0, int default_batch = 32,
                                           std::vector<std::string>* notes = nullptr);

// True when the line starts with a oneDNN verbose marker (onednn_verbose,
// dnnl_verbose, mkldnn_verbose).
bool is_onednn_verbose_line(std::string_view line);
struct VerboseConv {
  std::string descriptor;  // the problem descriptor field, as printed
  Direction dir;
};
// The descriptor and direction of a convolution exec line; nullopt for any
// other verbose line (info, create, other primitives, deconvolution, graph).
// Throws Error for an exec convolution line whose fields cannot be read.
std::optional<VerboseConv> parse_onednn_verbose_line(std::string_view line);

}  // namespace convlab
