#include "core/problem.hpp"

#include <algorithm>
#include <cctype>
#include <climits>
#include <map>
#include <optional>

#include "core/error.hpp"

namespace convlab {

std::string_view to_string(Direction d) {
  switch (d) {
    case Direction::fwd: return "fwd";
    case Direction::bwd_data: return "bwd-data";
    case Direction::bwd_filter: return "bwd-filter";
  }
  return "?";
}

Direction parse_direction(std::string_view text) {
  if (text == "fwd") return Direction::fwd;
  if (text == "bwd-data" || text == "bwd_data") return Direction::bwd_data;
  if (text == "bwd-filter" || text == "bwd_filter") return Direction::bwd_filter;
  fail("unknown direction '" + std::string(text) + "' (expected fwd, bwd-data or bwd-filter)");
}

std::vector<std::string_view> split_list(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  for (size_t at = 0;;) {
    const size_t comma = text.find(sep, at);
    out.push_back(text.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at));
    if (comma == std::string_view::npos) return out;
    at = comma + 1;
  }
}

std::vector<Direction> parse_directions(std::string_view text, std::string* note) {
  if (note) note->clear();
  if (text == "all") return {std::begin(kAllDirections), std::end(kAllDirections)};
  std::vector<Direction> out;
  std::string repeated;
  for (std::string_view item : split_list(text)) {
    const Direction d = parse_direction(item);
    if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
    else if (repeated.find(to_string(d)) == std::string::npos) repeated += (repeated.empty() ? "" : ", ") + std::string(to_string(d));
  }
  if (note && !repeated.empty()) *note = "--dir '" + printable(text) + "' names " + repeated + " more than once: each direction runs once";
  return out;
}

int64_t ConvProblem::reduction_length(Direction dir) const {
  switch (dir) {
    case Direction::fwd: return int64_t(c_per_group()) * r * s;
    case Direction::bwd_data: return int64_t(k_per_group()) * r * s;
    case Direction::bwd_filter: return int64_t(n) * p64() * q64();
  }
  return 0;
}

std::string ConvProblem::shape_error() const {
  auto positive = [](const char* what, int v) -> std::string {
    return v >= 1 ? std::string() : std::string(what) + " must be positive (got " + std::to_string(v) + ")";
  };
  for (auto [what, v] : {std::pair{"mb", n}, {"ic", c}, {"ih", h}, {"iw", w}, {"oc", k}, {"kh", r},
                         {"kw", s}, {"sh", stride_h}, {"sw", stride_w}, {"g", groups}}) {
    if (auto e = positive(what, v); !e.empty()) return e;
  }
  if (pad_h < 0 || pad_w < 0) return "padding must be non-negative (ph" + std::to_string(pad_h) + " pw" + std::to_string(pad_w) + ")";
  if (int64_t(pad_h_end) + stride_h <= 0 || int64_t(pad_w_end) + stride_w <= 0)
    return "end padding (bottom " + std::to_string(pad_h_end) + ", right " + std::to_string(pad_w_end) +
           ") must be greater than minus the stride (sh" + std::to_string(stride_h) + " sw" + std::to_string(stride_w) +
           "): more leaves whole input rows unread";
  if (dil_h < 1 || dil_w < 1) return "dilation must be non-negative (benchdnn's dh/dw are 0-based)";
  if (c % groups != 0) return "groups g" + std::to_string(groups) + " does not divide ic" + std::to_string(c);
  if (k % groups != 0) return "groups g" + std::to_string(groups) + " does not divide oc" + std::to_string(k);
  // In 64 bits: fields are < 2^31, so none of these wraps.
  const int64_t hp = padded_h64(), wp = padded_w64();
  const int64_t ext_h = int64_t(dil_h) * (int64_t(r) - 1) + 1, ext_w = int64_t(dil_w) * (int64_t(s) - 1) + 1;
  if (ext_h > hp || ext_w > wp)
    return "empty output: the dilated filter (" + std::to_string(ext_h) + "x" + std::to_string(ext_w) +
           ") is larger than the padded input (" + std::to_string(hp) + "x" + std::to_string(wp) + ")";
  return {};
}

std::string ConvProblem::size_error() const {
  const int64_t lim = INT32_MAX;
  const int64_t hp = padded_h64(), wp = padded_w64();
  if (hp > lim || wp > lim)
    return "padded input " + std::to_string(hp) + "x" + std::to_string(wp) +
           " (ih+ph+bottom x iw+pw+right) does not fit in 32 bits";
  // Kernels index with 32-bit ints: every tensor and every per-image column
  // matrix must stay below 2^31 elements. 128-bit products cannot wrap.
  using i128 = __int128;
  const i128 pq = i128(p64()) * q64();
  struct Check { const char* what; i128 v; };
  for (auto [what, v] : {Check{"src (mb*ic*ih*iw)", i128(n) * c * h * w},
                         Check{"dst (mb*oc*oh*ow)", i128(n) * k * pq},
                         Check{"wei (oc*ic/g*kh*kw)", i128(k) * (c / groups) * r * s},
                         Check{"column matrix (ic/g*kh*kw*oh*ow)", i128(c / groups) * r * s * pq},
                         Check{"padded input (mb*ic*(ih+ph+bottom)*(iw+pw+right))", i128(n) * c * hp * wp}}) {
    if (v > lim) return std::string(what) + " has more than 2^31-1 elements (32-bit index overflow)";
  }
  return {};
}

std::string ConvProblem::validate() const {
  if (auto e = shape_error(); !e.empty()) return e;
  return size_error();
}

namespace {

using i128 = __int128;

// The end padding stored for an axis of `in` elements whose output has `out`
// (128 bits: (out-1)*stride + (kern-1)*dil passes 2^63 for 31-bit fields).
// Every end padding in [e, e + stride - 1], e = benchdnn's (out-1)*stride - in
// + (kern-1)*dil + 1 - pad, gives that output and computes the same values
// (the stride leaves the rows past e unread); stored is `pad` when it is one
// of them, else the least one above -stride (oneDNN's pad_r + stride > 0):
// e, or 1 - stride when e is lower. Nothing when none is above -stride: the
// output leaves whole strides of input unread.
std::optional<i128> stored_end_padding(i128 in, i128 pad, i128 out, i128 kern, i128 stride, i128 dil) {
  const i128 e = (out - 1) * stride - in + (kern - 1) * dil + 1 - pad;
  if (pad >= e && pad <= e + stride - 1) return pad;
  if (e + stride - 1 <= -stride) return std::nullopt;
  return std::max(e, 1 - stride);
}

}  // namespace

void ConvProblem::normalize_padding() {
  if (!shape_error().empty()) return;  // outputs are only defined for a valid shape
  if (auto e = stored_end_padding(h, pad_h, p64(), r, stride_h, dil_h)) pad_h_end = int(*e);
  if (auto e = stored_end_padding(w, pad_w, q64(), s, stride_w, dil_w)) pad_w_end = int(*e);
}

std::string ConvProblem::key() const {
  // Printed so that benchdnn reads it as parse_problem() does: a square
  // problem by its h letters, any other by both axes' letters (benchdnn takes
  // a missing w stride as 1, not as the h one), a 1-D one by its w letters.
  // `ph`/`pw` are left out only when both are 0, the padding is symmetric and
  // benchdnn would deduce 0 from the output size: its compute_pad,
  // ((oh-1)*sh - ih + (kh-1)*(dh+1) + 1) / 2, is 0 only for -1..1.
  auto deduces_zero = [](int64_t in, int64_t out, int64_t kern, int64_t stride, int64_t dil) {
    const int64_t need = (out - 1) * stride + (kern - 1) * dil + 1 - in;
    return need >= -1 && need <= 1;
  };
  const bool pads = pad_h != 0 || pad_w != 0 || !symmetric_padding() ||
                    !deduces_zero(h, p64(), r, stride_h, dil_h) || !deduces_zero(w, q64(), s, stride_w, dil_w);
  std::string out;
  auto put = [&](const char* key, int64_t v) { out += key + std::to_string(v); };
  if (groups != 1) put("g", groups);
  put("mb", n);
  put("ic", c);
  if (is_1d()) {
    put("iw", w), put("oc", k), put("ow", q64()), put("kw", s);
    if (stride_w != 1) put("sw", stride_w);
    if (pads) put("pw", pad_w);
    if (dil_w != 1) put("dw", int64_t(dil_w) - 1);
    return out;
  }
  const bool square = h == w && p64() == q64() && r == s && stride_h == stride_w && pad_h == pad_w &&
                      pad_h_end == pad_w_end && dil_h == dil_w;
  auto pair = [&](const char* hk, int64_t hv, const char* wk, int64_t wv) {
    put(hk, hv);
    if (!square) put(wk, wv);
  };
  pair("ih", h, "iw", w);
  put("oc", k);
  pair("oh", p64(), "ow", q64());
  pair("kh", r, "kw", s);
  if (stride_h != 1 || stride_w != 1) pair("sh", stride_h, "sw", stride_w);
  if (pads) pair("ph", pad_h, "pw", pad_w);
  if (dil_h != 1 || dil_w != 1) pair("dh", int64_t(dil_h) - 1, "dw", int64_t(dil_w) - 1);
  return out;
}

std::string ConvProblem::canonical() const {
  std::string out = key();
  if (!name.empty()) out += "n\"" + name + "\"";
  return out;
}

bool is_problem_key(std::string_view key) {
  static const char* const kKeys[] = {"g",  "mb", "ic", "id", "ih", "iw", "oc", "od", "oh", "ow", "kd",
                                      "kh", "kw", "sd", "sh", "sw", "pd", "ph", "pw", "dd", "dh", "dw"};
  for (const char* k : kKeys)
    if (key == k) return true;
  return false;
}

namespace {

// A descriptor's letters and numbers ("mb32ic96..." -> {mb: 32, ic: 96, ...}) and its name.
struct Letters {
  std::map<std::string, int64_t> v;
  std::string name;
  std::optional<int64_t> get(const char* key) const {
    auto it = v.find(key);
    return it == v.end() ? std::nullopt : std::optional<int64_t>(it->second);
  }
};

// The name: n"quoted" or the rest of the string, starting after the 'n' at i.
// Returns the position after it (the end of the text).
size_t read_name(std::string_view text, size_t i, const std::string& quoted, std::string& name) {
  if (i < text.size() && text[i] == '"') {
    const size_t end = text.find('"', i + 1);
    if (end == std::string_view::npos) fail("problem " + quoted + ": unterminated name quote");
    name = std::string(text.substr(i + 1, end - i - 1));
    i = end + 1;
    if (i != text.size()) fail("problem " + quoted + ": the name n\"...\" must come last");
  } else {
    name = std::string(text.substr(i));
    i = text.size();
    if (name.find('"') != std::string::npos)
      fail("problem " + quoted + ": a name with a quote must be written n\"...\" (and may not contain '\"')");
  }
  if (name.empty()) fail("problem " + quoted + ": empty name after 'n' (write n\"NAME\" or leave it out)");
  if (printable(name) != name)
    fail("problem " + quoted +
         ": the name may not contain control characters, bidirectional controls or invalid UTF-8");
  if (!has_visible_character(name))
    fail("problem " + quoted + ": the name has no visible character (only spaces or invisible characters)");
  return i;
}

Letters read_letters(std::string_view text, const std::string& quoted) {
  Letters out;
  std::string too_big;
  size_t i = 0;
  while (i < text.size()) {
    const char ch = text[i];
    if (ch == '_') { ++i; continue; }
    if (ch == 'n') {
      i = read_name(text, i + 1, quoted, out.name);
      break;
    }
    if (!std::isalpha(static_cast<unsigned char>(ch)))
      fail("problem " + quoted + ": unexpected character '" + printable(std::string_view(&text[i], 1)) + "' at position " +
           std::to_string(i));
    size_t j = i;
    while (j < text.size() && std::isalpha(static_cast<unsigned char>(text[j]))) ++j;
    const std::string key(text.substr(i, j - i));
    if (!is_problem_key(key)) fail("problem " + quoted + ": unknown key '" + key + "'");
    if (j >= text.size() || !std::isdigit(static_cast<unsigned char>(text[j])))
      fail("problem " + quoted + ": expected a non-negative number after '" + key + "'");
    int64_t num = 0;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) {
      num = std::min<int64_t>(num * 10 + (text[j] - '0'), int64_t(INT32_MAX) + 1);  // saturates: too_big below
      ++j;
    }
    if (num > INT32_MAX && too_big.empty()) too_big = key;
    if (out.v.count(key)) fail("problem " + quoted + ": '" + key + "' given twice");
    out.v[key] = num;
    i = j;
  }
  // A well-formed descriptor with a size past 32 bits (benchdnn's
  // shapes_large_conv) is one convlab cannot run.
  if (!too_big.empty())
    throw UnsupportedProblem("problem " + quoted + ": value of '" + too_big + "' does not fit in 32 bits");
  return out;
}

// Depth, benchdnn's way: absent when none of its letters sets a value (id,
// kd, od, dd 0; sd 1; pd 0 count as unset, as for h and w below); a depth of
// one (id1 kd1, od 1 or not given, sd 1, pd 0, dd 0: benchdnn's 1-D and 2-D
// sets written as 5-D) is the 2-D problem; any other is 3-D.
void refuse_depth(const Letters& l, const std::string& quoted) {
  const int64_t id = l.get("id").value_or(0), kd = l.get("kd").value_or(0), od = l.get("od").value_or(0),
                sd = l.get("sd").value_or(1), pd = l.get("pd").value_or(0), dd = l.get("dd").value_or(0);
  const bool no_d = id == 0 && kd == 0 && od == 0 && dd == 0 && sd == 1 && pd == 0;
  const bool unit_d = id == 1 && kd == 1 && od <= 1 && dd == 0 && sd == 1 && pd == 0;
  if (!no_d && !unit_d)
    for (const char* k3 : {"id", "od", "kd", "sd", "pd", "dd"})
      if (l.v.count(k3))
        throw UnsupportedProblem("problem " + quoted + ": 3-D convolutions ('" + std::string(k3) +
                                 "') are not supported");
}

// The letters of one spatial axis ('h' or 'w'): input, output, filter,
// stride, padding, 0-based dilation.
struct Axis {
  std::optional<int64_t> i, o, k, s, p, d;
};

// benchdnn's reading (str2desc + sanitize_desc): an axis is absent when none
// of its letters sets a value (i, k, o, d 0; s 1; p 0 count as unset).
//   only h letters: a square problem, w = h (every letter);
//   only w letters: 1-D, H = 1 with a 1-row filter, no padding or stride;
//   both: each axis on its own (stride 1 and dilation 0 when not given, the
//         output and padding as below); an input or filter size given for
//         one axis only, which benchdnn rejects, serves both.
std::pair<Axis, Axis> read_axes(const Letters& l) {
  auto letters = [&](char x) {
    auto at = [&](char what) { return l.get((std::string(1, what) + x).c_str()); };
    return Axis{at('i'), at('o'), at('k'), at('s'), at('p'), at('d')};
  };
  auto absent = [](const Axis& a) {
    return a.i.value_or(0) == 0 && a.k.value_or(0) == 0 && a.o.value_or(0) == 0 && a.d.value_or(0) == 0 &&
           a.s.value_or(1) == 1 && a.p.value_or(0) == 0;
  };
  Axis ah = letters('h'), aw = letters('w');
  if (absent(aw)) {
    aw = ah;
  } else if (absent(ah)) {
    ah = Axis{1, std::nullopt, 1, 1, 0, 0};
  } else {
    if (!ah.i) ah.i = aw.i;
    if (!aw.i) aw.i = ah.i;
    if (!ah.k) ah.k = aw.k;
    if (!aw.k) aw.k = ah.k;
  }
  // oh0 is benchdnn's "not given": the output size is then computed.
  for (Axis* a : {&ah, &aw})
    if (a->o == 0) a->o.reset();
  return {ah, aw};
}

// The padding of one axis, benchdnn's way: without an output size, `pad` on
// both sides; with one, the top padding is `pad` (or, not given, half of
// what the output needs, rounded down, never negative: benchdnn's
// compute_pad) and the end padding what the output needs beyond it, stored
// as stored_end_padding() says.
void axis_padding(const std::string& quoted, char x, int64_t in, std::optional<int64_t> out,
                  std::optional<int64_t> pad, int64_t kern, int64_t stride, int64_t dil, int& begin, int& end) {
  const std::string ok = std::string("o") + x;
  if (stride < 1) {  // shape_error() says so
    begin = end = int(pad.value_or(0));
    return;
  }
  if (!out) {
    // benchdnn's compute_out, (in - (kern-1)*dil - 1 + 2*pad) / stride + 1 in C's
    // truncating division: a filter longer than the padded input by less than
    // the stride still has one output (the end padding then covers it).
    const i128 num = i128(in) - (kern - 1) * dil - 1 + 2 * i128(pad.value_or(0));
    const i128 o = num / stride + 1;
    if (o < 1 || o > INT64_MAX) {  // empty: shape_error() says so
      begin = end = int(pad.value_or(0));
      return;
    }
    out = int64_t(o);
    if (!pad) pad = 0;
  }
  const i128 need = i128(*out - 1) * stride + i128(kern - 1) * dil + 1 - in;
  const i128 b = pad ? i128(*pad) : need <= 0 ? 0 : need / 2;
  const std::optional<i128> e = stored_end_padding(in, b, *out, kern, stride, dil);
  if (!e) {  // the least output: the end padding at 1 - stride
    const int64_t num = in + int64_t(b) + 1 - stride - (kern - 1) * dil - 1;
    const int64_t least = num < 0 ? 1 : num / stride + 1;
    auto val = [&](const char* key, int64_t v) { return std::string(key) + x + std::to_string(v); };
    fail("problem " + quoted + ": " + ok + std::to_string(*out) + " leaves input " + (x == 'h' ? "rows" : "columns") +
         " unread (" + val("i", in) + ", " + val("k", kern) + ", " + val("s", stride) + ", " + val("p", int64_t(b)) +
         ", " + val("d", dil - 1) + " give at least " + ok + std::to_string(least) + ")");
  }
  if (b > INT32_MAX || *e > INT32_MAX)
    throw UnsupportedProblem("problem " + quoted + ": the padding that " + ok + std::to_string(*out) +
                             " needs does not fit in 32 bits");
  begin = int(b);
  end = int(*e);
}

}  // namespace

ConvProblem parse_problem(std::string_view text) {
  const std::string quoted = "'" + printable(text) + "'";
  if (text.empty()) fail("empty problem string (expected e.g. mb32ic96ih27oc256oh27kh5ph2)");
  const Letters l = read_letters(text, quoted);
  refuse_depth(l, quoted);
  const auto [ah, aw] = read_axes(l);
  if (!l.get("ic")) fail("problem " + quoted + ": input channels 'ic' missing");
  if (!l.get("oc")) fail("problem " + quoted + ": output channels 'oc' missing");
  if (!ah.i || !aw.i) fail("problem " + quoted + ": input size 'ih'/'iw' missing");
  if (!ah.k || !aw.k) fail("problem " + quoted + ": filter size 'kh'/'kw' missing");

  ConvProblem p;
  p.name = l.name;
  p.groups = int(l.get("g").value_or(1));
  p.n = int(l.get("mb").value_or(2));
  p.c = int(*l.get("ic"));
  p.k = int(*l.get("oc"));
  p.h = int(*ah.i);
  p.w = int(*aw.i);
  p.r = int(*ah.k);
  p.s = int(*aw.k);
  p.stride_h = int(ah.s.value_or(1));
  p.stride_w = int(aw.s.value_or(1));
  if (ah.d.value_or(0) >= INT32_MAX || aw.d.value_or(0) >= INT32_MAX)
    fail("problem " + quoted + ": dilation too large");
  p.dil_h = int(ah.d.value_or(0)) + 1;
  p.dil_w = int(aw.d.value_or(0)) + 1;
  axis_padding(quoted, 'h', p.h, ah.o, ah.p, p.r, p.stride_h, p.dil_h, p.pad_h, p.pad_h_end);
  axis_padding(quoted, 'w', p.w, aw.o, aw.p, p.s, p.stride_w, p.dil_w, p.pad_w, p.pad_w_end);
  if (auto e = p.shape_error(); !e.empty()) fail("problem " + quoted + ": " + e);
  if (auto e = p.size_error(); !e.empty()) throw UnsupportedProblem("problem " + quoted + ": " + e);
  return p;
}

}  // namespace convlab
